#include "protocol/json_writer.h"

#include <QString>

#include <array>
#include <charconv>

namespace symdex::protocol {

JsonWriter& JsonWriter::key(std::string_view name) {
    separate();
    out_ += '"';
    out_.append(name);
    out_ += "\":";
    needComma_ = false;
    return *this;
}

void JsonWriter::value(std::string_view utf8) {
    separate();
    quoted(utf8);
}

void JsonWriter::value(int64_t number) {
    separate();
    appendNumber(number);
}

JsonWriter& JsonWriter::appendNumber(int64_t number) {
    char digits[24];
    const auto [end, error] = std::to_chars(digits, digits + sizeof digits, number);
    out_.append(digits, size_t(end - digits));
    return *this;
}

void JsonWriter::value(bool b) {
    separate();
    out_ += b ? "true" : "false";
}

void JsonWriter::raw(std::string_view json) {
    separate();
    out_.append(json);
}

QByteArray JsonWriter::take() {
    needComma_ = false;
    QByteArray text(out_.data(), qsizetype(out_.size()));
    out_.clear();
    return text;
}

namespace {

/// The bytes a string written needs to look at: those escaped and those of UTF-8 past ASCII.
constexpr std::array<bool, 256> kNotPlain = [] {
    std::array<bool, 256> notPlain{};
    for (int c = 0; c < 256; ++c)
        notPlain[size_t(c)] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
    return notPlain;
}();

} // namespace

void JsonWriter::quoted(std::string_view utf8) {
    // Names and paths are plain ASCII nearly always: one pass to know it, one append.
    size_t plainRun = 0;
    while (plainRun < utf8.size() && !kNotPlain[static_cast<unsigned char>(utf8[plainRun])])
        ++plainRun;
    if (plainRun == utf8.size()) {
        out_ += '"';
        out_.append(utf8);
        out_ += '"';
        return;
    }
    for (unsigned char c : utf8.substr(plainRun))
        if (c >= 0x80) { // rare in names and paths: made valid once, then written as ASCII is
            const QByteArray valid =
                QString::fromUtf8(utf8.data(), qsizetype(utf8.size())).toUtf8();
            if (std::string_view(valid.constData(), size_t(valid.size())) != utf8)
                return quoted(std::string_view(valid.constData(), size_t(valid.size())));
            break;
        }
    static constexpr char kHex[] = "0123456789abcdef";
    out_ += '"';
    size_t plain = 0; // start of the run of bytes that need no escape
    auto flush = [&](size_t upTo) { out_.append(utf8.data() + plain, upTo - plain); };
    for (size_t i = 0; i < utf8.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(utf8[i]);
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        flush(i);
        plain = i + 1;
        out_ += '\\';
        switch (c) {
        case '"':
            out_ += '"';
            break;
        case '\\':
            out_ += '\\';
            break;
        case '\b':
            out_ += 'b';
            break;
        case '\f':
            out_ += 'f';
            break;
        case '\n':
            out_ += 'n';
            break;
        case '\r':
            out_ += 'r';
            break;
        case '\t':
            out_ += 't';
            break;
        default:
            out_ += "u00";
            out_ += kHex[c >> 4];
            out_ += kHex[c & 15];
        }
    }
    flush(utf8.size());
    out_ += '"';
}

} // namespace symdex::protocol
