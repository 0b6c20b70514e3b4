// Fuzzes the record decoders with bytes as a damaged or foreign store could hold them. The first
// byte picks the record type, the rest is the record.
//
// Checked beyond "no crash, no sanitizer report": what decodes re-encodes to bytes that decode to
// the same value, and re-encoding that is stable (the encoding of a value is canonical).
#include "store/records.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

using namespace symdex;

namespace {

template <typename Record, typename Decode, typename Encode>
void roundTrip(std::string_view bytes, Decode decode, Encode encode, const char* name) {
    std::optional<Record> value = decode(bytes);
    if (!value)
        return;
    const std::string encoded = encode(*value);
    std::optional<Record> again = decode(encoded);
    if (!again || !(*again == *value) || encode(*again) != encoded) {
        std::fprintf(stderr, "records_fuzzer: %s does not round-trip\n", name);
        std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0)
        return 0;
    const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 4) {
    case 0:
        roundTrip<Symbol>(bytes, decodeSymbol, encodeSymbol, "Symbol");
        break;
    case 1:
        roundTrip<Reference>(bytes, decodeReference, encodeReference, "Reference");
        break;
    case 2:
        roundTrip<FileRecord>(bytes, decodeFileRecord, encodeFileRecord, "FileRecord");
        break;
    case 3:
        roundTrip<TuRecord>(bytes, decodeTuRecord, encodeTuRecord, "TuRecord");
        break;
    }
    return 0;
}
