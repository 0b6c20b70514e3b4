// JsonWriter: a result's JSON text written directly, for answers of hundreds of locations
// (workspace/symbol, references), where building QJsonObjects and serialising them through
// QJsonDocument was a third of the daemon's work. Writes compact JSON, as QJsonDocument::Compact
// would for the same values.
#pragma once

#include <QByteArray>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace symdex::protocol {

/// Appends JSON to a buffer. The caller nests begin/end calls correctly and gives every value
/// inside an object a key(); commas are the writer's.
class JsonWriter {
public:
    void beginObject() { open('{'); }
    void endObject() { close('}'); }
    void beginArray() { open('['); }
    void endArray() { close(']'); }

    /// The key of the object member whose value comes next: a name of the protocol's, written
    /// as it is (nothing in it needs escaping).
    JsonWriter& key(std::string_view name);
    /// A string, UTF-8; malformed UTF-8 becomes U+FFFD, as QString::fromUtf8 makes it.
    void value(std::string_view utf8);
    void value(const char* utf8) { value(std::string_view(utf8)); }
    void value(int64_t number);
    void value(bool b);
    /// Text that is already JSON (a value QJsonDocument wrote, a request id as received).
    void raw(std::string_view json);
    /// A value written from a template: its first part by raw(), which puts the comma before
    /// it, the rest by these, which append to it (an answer of a fixed shape written a few
    /// appends at a time: through key() and value() each member was 200-300 instructions).
    JsonWriter& append(std::string_view json) {
        out_.append(json);
        return *this;
    }
    JsonWriter& appendNumber(int64_t number);
    JsonWriter& appendString(std::string_view utf8) {
        quoted(utf8);
        return *this;
    }

    /// Room for `bytes` more, ahead of a known number of answers (the buffer's doublings
    /// copied a 100-answer workspace/symbol's text ten times).
    void reserve(size_t bytes) { out_.reserve(out_.size() + bytes); }

    /// The text written so far (the writer is empty after).
    QByteArray take();

private:
    void separate() {
        if (needComma_)
            out_ += ',';
        needComma_ = true;
    }
    void open(char c) {
        separate();
        out_ += c;
        needComma_ = false;
    }
    void close(char c) {
        out_ += c;
        needComma_ = true;
    }
    void quoted(std::string_view utf8);

    // A std::string, whose appends are inline: QByteArray's each went out of line
    // (QByteArray::insert alone 1.8% of a substring workspace/symbol's instructions at 300k
    // names, docs/measurements.md).
    std::string out_;
    bool needComma_ = false;
};

} // namespace symdex::protocol
