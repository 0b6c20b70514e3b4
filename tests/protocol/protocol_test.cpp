// The wire (protocol/): LSP framing and JSON-RPC parsing, store records as JSON and RpcClient
// against a scripted server; and the daemon's pure parts: UTF-16 columns, the symbol under the
// cursor and the socket directory checks.
#include "daemon/positions.h"
#include "daemon/runtime_paths.h"
#include "daemon/symbol_at.h"
#include "protocol/client.h"
#include "protocol/json_writer.h"
#include "protocol/jsonrpc.h"
#include "protocol/store_json.h"
#include "store/encoding.h"
#include "store/symbol_store.h"
#include "test_util.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QUrl>
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>
#include <tuple>
#include <unistd.h>

using namespace symdex;
using namespace symdex::daemon;
using namespace symdex::protocol;

namespace {

FrameReader::Status next(FrameReader& reader, QByteArray* body, std::string* error) {
    return reader.next(body, error);
}

} // namespace

TEST_CASE("framing: messages split and joined anywhere come out whole", "[protocol]") {
    const QByteArray a = frame(QByteArray(R"({"jsonrpc":"2.0","method":"a"})"));
    const QByteArray b = frame(QByteArray(R"({"jsonrpc":"2.0","id":1,"method":"b"})"));
    const QByteArray stream = a + b;
    for (qsizetype cut = 0; cut <= stream.size(); ++cut) {
        FrameReader reader;
        QByteArray body;
        std::string error;
        std::vector<QByteArray> out;
        for (const QByteArray& part : {stream.left(cut), stream.mid(cut)}) {
            reader.append(part);
            while (next(reader, &body, &error) == FrameReader::Status::Message)
                out.push_back(body);
        }
        REQUIRE(out.size() == 2);
        CHECK(out[0] == R"({"jsonrpc":"2.0","method":"a"})");
        CHECK(out[1] == R"({"jsonrpc":"2.0","id":1,"method":"b"})");
        CHECK(reader.buffered() == 0);
    }
}

TEST_CASE("framing: Content-Type and header case are accepted", "[protocol]") {
    FrameReader reader;
    reader.append("content-length: 2\r\nContent-Type: application/vscode-jsonrpc; "
                  "charset=utf-8\r\n\r\n{}");
    QByteArray body;
    std::string error;
    REQUIRE(reader.next(&body, &error) == FrameReader::Status::Message);
    CHECK(body == "{}");
}

TEST_CASE("framing: broken streams are errors, not waits", "[protocol]") {
    auto status = [](const QByteArray& bytes, size_t limit = kMaxRequestBytes) {
        FrameReader reader(limit);
        reader.append(bytes);
        QByteArray body;
        std::string error;
        FrameReader::Status s = reader.next(&body, &error);
        return std::make_pair(s, error);
    };
    CHECK(status("Content-Type: x\r\n\r\n{}").second == "header without Content-Length");
    CHECK(status("Content-Length: abc\r\n\r\n").second == "Content-Length 'abc' is not a number");
    CHECK(status(R"({"jsonrpc":"2.0"})").second == "message without a Content-Length header");
    CHECK(status("hello world\r\n").first == FrameReader::Status::Error);
    const auto big = status("Content-Length: 101\r\n\r\n", 100);
    CHECK(big.first == FrameReader::Status::Error);
    CHECK(big.second == "message of 101 bytes exceeds the limit of 100 bytes");
    CHECK(status("Content-Length: 100\r\n\r\n", 100).first == FrameReader::Status::NeedMore);
    CHECK(status("Content-Length: 1").first == FrameReader::Status::NeedMore);
    CHECK(status(QByteArray(kMaxHeaderBytes + 1, 'x')).first == FrameReader::Status::Error);
}

TEST_CASE("framing: requests are limited to 16 MiB, answers a client reads to 1 GiB",
          "[protocol]") {
    const QByteArray json = "[" + QByteArray(20 << 20, ' ') + "]"; // a 20 MiB answer
    auto read = [](FrameReader& reader, const QByteArray& bytes) {
        reader.append(bytes);
        QByteArray body;
        std::string error;
        const FrameReader::Status s = reader.next(&body, &error);
        return std::make_tuple(s, body.size(), error);
    };
    FrameReader daemonSide;
    CHECK(std::get<2>(read(daemonSide, frame(json))) ==
          "message of 20971522 bytes exceeds the limit of 16777216 bytes");
    FrameReader clientSide(kMaxAnswerBytes, "answer");
    const auto [status, size, error] = read(clientSide, frame(json));
    CHECK(status == FrameReader::Status::Message);
    CHECK(size == json.size());
    FrameReader corrupt(kMaxAnswerBytes, "answer");
    CHECK(std::get<2>(read(corrupt, "Content-Length: 1073741825\r\n\r\n")) ==
          "answer of 1073741825 bytes exceeds the limit of 1073741824 bytes");
}

TEST_CASE("RpcClient: the timeout is for silence, not for the length of an answer", "[protocol]") {
    // A server that answers the first request with a 2 MB answer dribbled over ~1.5 s: longer
    // than the call's timeout, but never silent for long.
    test::TempDir dir;
    const std::string path = (dir.path() / "server.sock").string();
    const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listener, 1) == 0);
    const QJsonArray answer = [] {
        QJsonArray a;
        for (int i = 0; i < 100000; ++i)
            a.append(QString("item %1").arg(i));
        return a;
    }();
    // Framed before the client asks: building it takes longer than the timeout under TSan on a
    // busy machine (CI of d986d52), and a server that silent would be right to time out.
    const QByteArray bytes = frame(makeResult(1, answer));
    std::thread server([&] {
        const int fd = ::accept(listener, nullptr, nullptr);
        char request[4096];
        (void)!::read(fd, request, sizeof request);
        const qsizetype piece = bytes.size() / 15 + 1;
        for (qsizetype at = 0; at < bytes.size(); at += piece) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            if (::send(fd, bytes.constData() + at, size_t(std::min(piece, bytes.size() - at)),
                       MSG_NOSIGNAL) < 0)
                break; // the client gave up
        }
        ::close(fd);
    });
    std::string error;
    auto client = RpcClient::connect(path, &error);
    REQUIRE(client);
    QJsonValue result;
    try {
        result = client->call("slow/answer", QJsonObject{}, std::chrono::milliseconds(500));
    } catch (const RpcFailure& e) {
        FAIL_CHECK(e.what());
    }
    client.reset(); // a server still writing stops
    server.join();
    ::close(listener);
    CHECK(result.toArray().size() == answer.size());
    const bool sameAnswer = result.toArray() == answer;
    CHECK(sameAnswer);
}

TEST_CASE("framing: the header block is limited however it arrives", "[protocol]") {
    // The limit counts every header byte, the blank line included, whether the blank line came
    // in the same read or not.
    auto status = [](const std::vector<QByteArray>& parts) {
        FrameReader reader;
        QByteArray body;
        std::string error;
        FrameReader::Status s = FrameReader::Status::NeedMore;
        for (const QByteArray& part : parts) {
            reader.append(part);
            s = reader.next(&body, &error);
            if (s != FrameReader::Status::NeedMore)
                break;
        }
        return std::make_pair(s, error);
    };
    const QByteArray longLine = "X-Padding: " + QByteArray(20000, 'a') + "\r\n";
    QByteArray manyLines;
    for (int i = 0; i < 5000; ++i)
        manyLines += "X-" + QByteArray::number(i) + ": 1\r\n";
    const QByteArray end = "Content-Length: 2\r\n\r\n{}";
    for (const auto& parts :
         {std::vector<QByteArray>{longLine + end}, std::vector<QByteArray>{manyLines + end},
          std::vector<QByteArray>{longLine, end},
          std::vector<QByteArray>{manyLines.left(100), manyLines.mid(100) + end}}) {
        const auto [s, error] = status(parts);
        CHECK(s == FrameReader::Status::Error);
        CHECK(error.find("header block exceeds the limit of 8192 bytes") != std::string::npos);
    }
    // Exactly at the limit is fine: 8192 bytes including the final CRLF CRLF.
    const QByteArray head = "Content-Length: 2\r\nX-Padding: ";
    const QByteArray tail = "\r\n\r\n";
    const QByteArray exact =
        head + QByteArray(qsizetype(kMaxHeaderBytes) - head.size() - tail.size(), 'a') + tail;
    REQUIRE(size_t(exact.size()) == kMaxHeaderBytes);
    CHECK(status({exact + "{}"}).first == FrameReader::Status::Message);
    const QByteArray over =
        head + QByteArray(qsizetype(kMaxHeaderBytes) - head.size() - tail.size() + 1, 'a') + tail;
    CHECK(status({over + "{}"}).first == FrameReader::Status::Error);
}

TEST_CASE("framing: Content-Length is one plain decimal number", "[protocol]") {
    auto status = [](const QByteArray& bytes) {
        FrameReader reader;
        reader.append(bytes);
        QByteArray body;
        std::string error;
        FrameReader::Status s = reader.next(&body, &error);
        return std::make_pair(s, error);
    };
    CHECK(status("Content-Length: 2\r\nContent-Length: 5\r\n\r\n{}").second ==
          "more than one Content-Length header");
    CHECK(status("Content-Length: 2\r\ncontent-length: 2\r\n\r\n{}").second ==
          "more than one Content-Length header");
    CHECK(status("Content-Length: +2\r\n\r\n{}").second == "Content-Length '+2' is not a number");
    CHECK(status("Content-Length: -2\r\n\r\n{}").first == FrameReader::Status::Error);
    CHECK(status("Content-Length: 0x2\r\n\r\n{}").first == FrameReader::Status::Error);
    CHECK(status("Content-Length: 2 2\r\n\r\n{}").first == FrameReader::Status::Error);
    CHECK(status("Content-Length: \r\n\r\n{}").second == "Content-Length '' is not a number");
    // 2^64 + 2 would wrap to 2 in a 64-bit counter.
    CHECK(status("Content-Length: 18446744073709551618\r\n\r\n{}").second ==
          "Content-Length '18446744073709551618' is out of range");
    CHECK(status("Content-Length: 002\r\n\r\n{}").first == FrameReader::Status::Message);
    CHECK(status("Content-Length:2\r\n\r\n{}").first == FrameReader::Status::Message);
}

TEST_CASE("JSON-RPC: requests, notifications, responses and bad messages", "[protocol]") {
    RpcError error{};
    RequestId id;
    auto request =
        parseMessage(R"({"jsonrpc":"2.0","id":7,"method":"m","params":{"a":1}})", &error, &id);
    REQUIRE(request);
    CHECK(request->method == "m");
    CHECK(request->id.value.toInt() == 7);
    CHECK_FALSE(request->isResponse());
    auto note = parseMessage(R"({"jsonrpc":"2.0","method":"n"})", &error, &id);
    REQUIRE(note);
    CHECK_FALSE(note->hasId());
    auto response = parseMessage(R"({"jsonrpc":"2.0","id":"x","result":null})", &error, &id);
    REQUIRE(response);
    CHECK(response->isResponse());

    auto fails = [&](const QByteArray& body, int code) {
        error = {};
        const bool failed = !parseMessage(body, &error, &id);
        return failed && error.code == code;
    };
    CHECK(fails("{not json", kParseError));
    CHECK(fails("[]", kInvalidRequest));
    CHECK(fails(R"({"id":1,"method":"m"})", kInvalidRequest)); // no "jsonrpc"
    CHECK(fails(R"({"jsonrpc":"2.0","id":1,"method":3})", kInvalidRequest));
    CHECK(fails(R"({"jsonrpc":"2.0","id":{},"method":"m"})", kInvalidRequest));
    CHECK(fails(R"({"jsonrpc":"2.0","id":1,"method":"m","params":5})", kInvalidParams));
    // The id is kept for the error answer when it could be read.
    CHECK(fails(R"({"jsonrpc":"1.0","id":9,"method":"m"})", kInvalidRequest));
    CHECK(id.value.toInt() == 9);
    CHECK(idKey(requestId(QJsonValue(1), QByteArrayView("1"))) !=
          idKey(requestId(QJsonValue("1"), std::nullopt)));
}

TEST_CASE("JSON-RPC: numeric ids are answered with the text the client sent", "[protocol]") {
    RpcError error{};
    RequestId id;
    // The reply body of a framed message.
    auto bodyOf = [](const QByteArray& framed) {
        return framed.mid(framed.indexOf("\r\n\r\n") + 4);
    };
    for (const QByteArray& text : {QByteArray("1180591620717411303424"), QByteArray("-7"),
                                   QByteArray("0.1"), QByteArray("1E2"), QByteArray("3.0")}) {
        INFO(text.toStdString());
        auto m =
            parseMessage(R"({"jsonrpc":"2.0", "method":"m", "id" : )" + text + "}", &error, &id);
        REQUIRE(m);
        CHECK(m->id.number == text);
        const QByteArray result = bodyOf(frameResult(m->id, 5));
        CHECK(result.startsWith("{\"id\":" + text + ","));
        CHECK(QJsonDocument::fromJson(result).object()["result"].toInt() == 5);
        const QByteArray failure = bodyOf(frameError(m->id, kInvalidParams, "no"));
        CHECK(failure.startsWith("{\"id\":" + text + ","));
        CHECK(QJsonDocument::fromJson(failure).object()["error"].toObject()["code"].toInt() ==
              kInvalidParams);
    }
    // The id of a message that fails later checks is kept exactly too.
    CHECK_FALSE(
        parseMessage(R"({"jsonrpc":"1.0","id":1180591620717411303425,"method":"m"})", &error, &id));
    CHECK(id.number == "1180591620717411303425");
    // Two ids one double cannot tell apart are two keys.
    auto big =
        parseMessage(R"({"jsonrpc":"2.0","id":1180591620717411303424,"method":"m"})", &error, &id);
    auto next =
        parseMessage(R"({"jsonrpc":"2.0","id":1180591620717411303425,"method":"m"})", &error, &id);
    REQUIRE((big && next));
    CHECK(idKey(big->id) != idKey(next->id));
    // Strings and null go through JSON as they are.
    auto named = parseMessage(R"({"jsonrpc":"2.0","id":"a\"b","method":"m"})", &error, &id);
    REQUIRE(named);
    CHECK(named->id.number.isEmpty());
    CHECK(QJsonDocument::fromJson(bodyOf(frameResult(named->id, 1))).object()["id"] == "a\"b");
    CHECK(bodyOf(frameError(RequestId{QJsonValue::Null, {}}, kParseError, "x"))
              .contains("\"id\":null"));
}

TEST_CASE("JSON-RPC: member text is found at the top level only", "[protocol]") {
    const QByteArray object =
        R"( { "params" : {"id": 99, "s": "}\"id\": 5"}, "x": [ {"id": 4} ], "\u0069d" : 12e3 } )";
    CHECK(jsonMemberText(object, u"id") == QByteArrayView("12e3"));
    const auto params = jsonMemberText(object, u"params");
    REQUIRE(params);
    CHECK(*params == QByteArrayView(R"({"id": 99, "s": "}\"id\": 5"})"));
    CHECK(jsonMemberText(*params, u"id") == QByteArrayView("99"));
    CHECK_FALSE(jsonMemberText(object, u"y"));
    CHECK_FALSE(jsonMemberText("[1]", u"id"));
    // Duplicate keys: the last, as QJsonDocument keeps it.
    RpcError error{};
    RequestId id;
    auto m = parseMessage(R"({"jsonrpc":"2.0","id":1,"id":2,"method":"m"})", &error, &id);
    REQUIRE(m);
    CHECK(m->id.value.toInt() == 2);
    CHECK(m->id.number == "2");
}

TEST_CASE("positions: UTF-16 columns from UTF-8 bytes and back", "[protocol]") {
    const std::string line =
        "int \xC3\xA9t\xC3\xA9 = f(\xF0\x9F\x98\x80, x);"; // é (2 bytes), 😀 (4)
    CHECK(utf16FromByteOffset("abc", 2) == 2);
    CHECK(utf16FromByteOffset(line, 4) == 4); // before "été"
    CHECK(utf16FromByteOffset(line, 6) == 5); // after "é"
    CHECK(utf16FromByteOffset(line, 9) == 7); // past "été"
    const uint32_t x = uint32_t(line.find('x'));
    CHECK(utf16FromByteOffset(line, x) == x - 2 - 2); // é twice (-1 each), 😀 (4 bytes, 2 units)
    for (uint32_t units = 0; units < 20; ++units) {
        const uint32_t bytes = byteOffsetFromUtf16(line, units);
        if (units != 13) // inside the surrogate pair: no byte offset maps back to it
            CHECK(utf16FromByteOffset(line, bytes) == units);
    }
    CHECK(byteOffsetFromUtf16("ab", 5) == 5); // past the end: one byte per unit
    CHECK(utf16FromByteOffset("ab", 5) == 5);
}

TEST_CASE("JSON text: the writer writes what QJsonDocument writes for the same values",
          "[protocol]") {
    // Every ASCII byte, quotes and backslashes, UTF-8 of 2-4 bytes, and malformed UTF-8 (a
    // stray continuation byte, a cut sequence, an overlong form), which QString makes U+FFFD.
    std::vector<std::string> strings = {
        "",       "plain",   "a\"b\\c/d", "\xC3\xA9t\xC3\xA9", "\xF0\x9F\x98\x80",
        "x\x80y", "cut\xC3", "\xC0\xAF",  "\xFF\xFE",          "tab\there\r\n"};
    std::string ascii;
    for (int c = 1; c < 128; ++c)
        ascii += char(c);
    strings.push_back(ascii);
    JsonWriter w;
    QJsonArray expected;
    w.beginArray();
    for (const std::string& s : strings) {
        w.beginObject();
        w.key("n").value(int64_t(-1) << 40);
        w.key("s").value(s);
        w.key("t").value(true);
        w.key("u").beginArray();
        w.value(int64_t(0));
        w.endArray();
        w.endObject();
        expected.append(QJsonObject{{"n", qint64(-1) << 40},
                                    {"s", QString::fromStdString(s)},
                                    {"t", true},
                                    {"u", QJsonArray{0}}});
    }
    w.value(std::string_view("last"));
    expected.append("last");
    w.endArray();
    const QByteArray text = w.take();
    QJsonParseError error;
    const QJsonDocument parsed = QJsonDocument::fromJson(text, &error);
    REQUIRE(error.error == QJsonParseError::NoError);
    CHECK(parsed.array() == expected);
    CHECK(text == QJsonDocument(expected).toJson(QJsonDocument::Compact));
    CHECK(w.take().isEmpty());

    // An answer written as text carries the id as the client sent it.
    auto bodyOf = [](const QByteArray& framed) {
        return framed.mid(framed.indexOf("\r\n\r\n") + 4);
    };
    const QByteArray big = "1180591620717411303424";
    CHECK(bodyOf(frameResultText(RequestId{QJsonValue(1.0e21), big}, "[1,{}]")) ==
          R"({"id":1180591620717411303424,"jsonrpc":"2.0","result":[1,{}]})");
    CHECK(bodyOf(frameResultText(RequestId{QJsonValue("a\"b"), {}}, "null")) ==
          bodyOf(frameResult(RequestId{QJsonValue("a\"b"), {}}, QJsonValue::Null)));
    CHECK(bodyOf(frameResultText(RequestId{QJsonValue::Null, {}}, "[]")) ==
          R"({"id":null,"jsonrpc":"2.0","result":[]})");
    // A lone surrogate, which JSON's \u escapes allow and QString keeps: written back as
    // \ud800, not as the '?' its UTF-8 conversion makes, or the client cannot match the answer.
    const QJsonValue surrogate = QJsonDocument::fromJson(R"(["a\ud800b"])").array().at(0);
    REQUIRE(surrogate.isString());
    CHECK(bodyOf(frameResultText(RequestId{surrogate, {}}, "[]")) ==
          bodyOf(frameResult(RequestId{surrogate, {}}, QJsonArray())));
    CHECK(bodyOf(frameResultText(RequestId{surrogate, {}}, "[]")) ==
          R"({"id":"a\ud800b","jsonrpc":"2.0","result":[]})");
}

TEST_CASE("URIs and locations: written as text, as QUrl and QJsonObject write them", "[protocol]") {
    std::vector<std::string> paths = {"/a/b",           "/",
                                      "/a//b",          "/a/./b/../c",
                                      "/a/b/",          "//server/share/x.cpp",
                                      "relative/x.cpp", "/caf\xC3\xA9.cpp",
                                      "/bad\xFF.cpp",   "/a b%20#?.cpp"};
    for (int c = 1; c < 128; ++c)
        paths.push_back(std::string("/dir/x") + char(c) + "y.cpp");
    for (const std::string& path : paths) {
        INFO(path);
        CHECK(fileUri(path) == QUrl::fromLocalFile(QString::fromStdString(path))
                                   .toString(QUrl::FullyEncoded)
                                   .toStdString());
    }
    // A file with characters of 2 and 4 UTF-8 bytes: UTF-16 columns differ from byte columns.
    test::TempDir dir;
    const std::string path = (dir.path() / "caf\xC3\xA9 x.cpp").string();
    std::ofstream(path) << "int \xC3\xA9t\xC3\xA9 = f(\xF0\x9F\x98\x80, x);\nint y;\n";
    for (PositionEncoding encoding : {PositionEncoding::Utf16, PositionEncoding::Utf8})
        for (Position at : {Position{1, 5}, Position{1, 22}, Position{2, 5}, Position{9, 1}}) {
            PositionMapper objects(encoding), text(encoding);
            JsonWriter w;
            text.writeLocation(w, path, at, 3);
            // The same text as QJsonDocument's, not only the same object.
            CHECK(w.take() ==
                  QJsonDocument(objects.location(path, at, 3)).toJson(QJsonDocument::Compact));
        }
    // Byte 22 of line 1 is UTF-16 unit 17 (é and é one unit each, the emoji two).
    PositionMapper utf16(PositionEncoding::Utf16);
    CHECK(utf16.location(path, {1, 22}, 3)["range"]
              .toObject()["start"]
              .toObject()["character"]
              .toInt() == 17);
    // ASCII or not, wherever the first byte >= 0x80 lies: in a word of eight, or in the tail.
    for (size_t size : {size_t(1), size_t(7), size_t(8), size_t(9), size_t(100), size_t(70000)})
        for (size_t at = 0; at < size; at += std::max<size_t>(1, size / 5)) {
            const std::string file = (dir.path() / ("a" + std::to_string(size))).string();
            std::string text(size, 'a');
            std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
            CHECK(isAsciiFile(file));
            text[at] = '\xE9';
            // Another size, so that the cached answer of the same mtime is not the one read.
            std::ofstream(file, std::ios::binary | std::ios::trunc) << text << 'b';
            INFO(size << " " << at);
            CHECK_FALSE(isAsciiFile(file));
        }
}

TEST_CASE("isAsciiFile: a file the index saw as ASCII, unchanged since, is not read again",
          "[protocol]") {
    test::TempDir dir;
    StoreOptions options;
    options.directory = dir.path() / "store";
    std::unique_ptr<SymbolStore> store = SymbolStore::open(options);
    // Each file holds a high byte, so that an answer of ASCII shows the index was trusted and
    // the file not read; each is asked once (the answers are cached by path, mtime and size).
    auto record = [&](const std::string& name, bool ascii, int64_t ctimeShift) {
        const std::string path = (dir.path() / name).string();
        std::ofstream(path) << "int caf\xC3\xA9 = 1;\n";
        struct stat st;
        REQUIRE(::stat(path.c_str(), &st) == 0);
        IndexedTu tu;
        tu.mainFile = path;
        tu.record.commandHash = 1;
        tu.includedFiles = {path};
        IndexedFile& file = tu.files.emplace_back();
        file.file.path = path;
        file.file.contentHash = 7;
        file.file.mtimeNs = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
        file.file.size = uint64_t(st.st_size);
        file.file.ctimeNs =
            int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec + ctimeShift;
        file.file.inode = uint64_t(st.st_ino);
        file.file.asciiOnly = ascii;
        store->publish(std::move(tu));
        store->flush();
        return path;
    };
    CHECK(isAsciiFile(record("trusted.cc", true, 0), store.get()));
    CHECK_FALSE(isAsciiFile(record("no-index.cc", true, 0)));
    CHECK_FALSE(isAsciiFile(record("not-ascii.cc", false, 0), store.get()));
    CHECK_FALSE(isAsciiFile(record("changed.cc", true, 1), store.get())); // another ctime: read

    // The mapper of a request asks the index too: byte 9 is character 9 in a trusted file.
    const std::string trusted = record("mapped.cc", true, 0);
    PositionMapper mapper(PositionEncoding::Utf16, store.get());
    CHECK(mapper.location(trusted, {1, 10}, 1)["range"]
              .toObject()["start"]
              .toObject()["character"]
              .toInt() == 9);

    // And one that reads the records from the snapshot its request holds (workspace/symbol's).
    const std::string fromSnapshot = record("snapshot.cc", true, 0);
    const std::string notAscii = record("snapshot-not-ascii.cc", false, 0);
    const std::string trustedToo = record("snapshot-trusted.cc", true, 0);
    const StoreSnapshot snapshot = store->snapshot();
    CHECK(isAsciiFile(trustedToo, snapshot));
    PositionMapper ofSnapshot(PositionEncoding::Utf16, snapshot);
    CHECK(ofSnapshot.location(fromSnapshot, {1, 10}, 1)["range"]
              .toObject()["start"]
              .toObject()["character"]
              .toInt() == 9);
    CHECK(ofSnapshot.location(notAscii, {1, 10}, 1)["range"]
              .toObject()["start"]
              .toObject()["character"]
              .toInt() == 8); // read: the two bytes of the é are one character
}

TEST_CASE("URIs: file URIs to paths and back, percent-encoding included", "[protocol]") {
    CHECK(pathToUri("/a/b c.cpp") == "file:///a/b%20c.cpp");
    CHECK(uriToPath("file:///a/b%20c.cpp") == std::optional<std::string>("/a/b c.cpp"));
    CHECK_FALSE(uriToPath("http://example.com/x.cpp"));
    CHECK_FALSE(uriToPath("not a uri"));
}

TEST_CASE("symbolAt: the name under the cursor, from declarations and references", "[protocol]") {
    // circle.cpp line 9: "Circle::Circle(Length radius) : radius_(radius) { ++counter; }"
    Symbol ctor;
    ctor.usr = "c:@N@geo@S@Circle@F@Circle#d#";
    ctor.name = "Circle";
    ctor.location = {9, 9};
    const uint64_t circleClass = hash64("c:@N@geo@S@Circle");
    const uint64_t counter = hash64("c:@N@geo@counter");
    const std::vector<Reference> refs = {
        {circleClass, {9, 1}, kRoleReference},
        {circleClass, {9, 9}, kRoleReference}, // the constructor's name names the class too
        {counter, {9, 53}, kRoleRead | kRoleWrite},
    };
    const NameLookup names = [&](uint64_t usr) -> std::optional<std::string> {
        if (usr == circleClass)
            return "Circle";
        if (usr == counter)
            return "counter";
        return std::nullopt;
    };
    const std::string text = "Circle::Circle(Length radius) : radius_(radius) { ++counter; }";
    auto at = [&](uint32_t column) { return symbolAt({ctor}, refs, {9, column}, names, text); };

    REQUIRE(at(1));
    CHECK(at(1)->usrHash == circleClass);
    CHECK(at(6)->usrHash == circleClass); // last letter of the first "Circle"
    CHECK(at(7)->usrHash == circleClass); // just past it: an editor cursor after the word
    CHECK_FALSE(at(8));                   // on the second ':'
    REQUIRE(at(9));
    CHECK(at(9)->usrHash == ctor.usrHash()); // a declaration wins over a reference
    CHECK(at(9)->isDeclaration);
    CHECK(at(14)->usrHash == ctor.usrHash());
    CHECK(at(55)->usrHash == counter);
    CHECK(at(55)->start == Position{9, 53});
    CHECK(at(55)->length == 7);
    CHECK_FALSE(symbolAt({ctor}, refs, {10, 9}, names, text)); // another line

    // A reference to a symbol the store has no declaration of: the identifier's length.
    const std::vector<Reference> unknown = {{hash64("c:@N@std@F@move"), {1, 5}, kRoleCall}};
    auto target = symbolAt({}, unknown, {1, 9}, names, "    move(x);");
    REQUIRE(target);
    CHECK(target->length == 4);
    CHECK_FALSE(symbolAt({}, unknown, {1, 10}, names, "    move(x);"));
    CHECK(identifierLength("~Shape()", 0) == 6);
    CHECK(identifierLength("(x)", 0) == 0);

    // "    BlockBuilder meta_index_block(&r->options);": libclang reports the constructor call at
    // the variable's name. The variable is what the cursor is on, although the constructor's
    // name is shorter (found on LevelDB by bench/lsp_agreement: definition went to the
    // constructor, where clangd goes to the variable).
    Symbol variable;
    variable.usr = "c:table_builder.cc@F@Finish#@meta_index_block";
    variable.name = "meta_index_block";
    variable.location = {214, 18};
    const uint64_t constructor = hash64("c:@N@leveldb@S@BlockBuilder@F@BlockBuilder#");
    const NameLookup ctorName = [&](uint64_t usr) -> std::optional<std::string> {
        return usr == constructor ? std::optional<std::string>("BlockBuilder") : std::nullopt;
    };
    const std::string line = "    BlockBuilder meta_index_block(&r->options);";
    const std::vector<Reference> call = {{constructor, {214, 18}, kRoleCall}};
    auto onVariable = symbolAt({variable}, call, {214, 20}, ctorName, line);
    REQUIRE(onVariable);
    CHECK(onVariable->usrHash == variable.usrHash());
    // Without the declaration (a local variable is not indexed), nothing: the constructor is not
    // what the cursor is on (clangd answers the variable, which symdex does not index).
    CHECK_FALSE(symbolAt({}, call, {214, 20}, ctorName, line));
    // An implicit conversion at a string literal: nothing either; an operator: its use.
    const std::vector<Reference> conversion = {{constructor, {1, 9}, kRoleCall}};
    CHECK_FALSE(symbolAt({}, conversion, {1, 10}, ctorName, "    Put(\"key\");"));
    // Right after the call's '(' (on the literal's opening quote), the call: its callee, as
    // clangd answers there (found on LevelDB by bench/lsp_agreement); inside the literal, still
    // nothing.
    const uint64_t put = hash64("c:@N@leveldb@S@DB@F@Put#");
    const NameLookup putNames = [&](uint64_t usr) -> std::optional<std::string> {
        return usr == put ? "Put" : "BlockBuilder";
    };
    const std::vector<Reference> putCall = {{put, {1, 5}, kRoleCall},
                                            {constructor, {1, 9}, kRoleCall}};
    auto onQuote = symbolAt({}, putCall, {1, 9}, putNames, "    Put(\"key\");");
    REQUIRE(onQuote);
    CHECK(onQuote->usrHash == put);
    CHECK(onQuote->start == Position{1, 5});
    CHECK_FALSE(symbolAt({}, putCall, {1, 10}, putNames, "    Put(\"key\");"));
    const uint64_t plus = hash64("c:@N@leveldb@F@operator+#");
    const NameLookup plusName = [&](uint64_t) -> std::optional<std::string> { return "operator+"; };
    const std::vector<Reference> op = {{plus, {1, 7}, kRoleCall}};
    auto onOperator = symbolAt({}, op, {1, 7}, plusName, "    a + b;");
    REQUIRE(onOperator);
    CHECK(onOperator->usrHash == plus);
    // "  EXPECT_LEVELDB_OK(DB::Open(...));": gtest's expansion calls AssertHelper::operator= at
    // the macro's name. The macro is what the cursor is on (clangd goes to its #define), not
    // the operator (found on LevelDB by bench/lsp_agreement). An explicit call names it.
    const uint64_t macro = hash64("c:testutil.h@566@macro@EXPECT_LEVELDB_OK");
    const uint64_t assign = hash64("c:@N@testing@N@internal@S@AssertHelper@F@operator=#");
    const NameLookup gtestNames = [&](uint64_t usr) -> std::optional<std::string> {
        return usr == macro ? "EXPECT_LEVELDB_OK" : "operator=";
    };
    const std::string expect = "    EXPECT_LEVELDB_OK(DB::Open(options_, dbname_, &db_));";
    const std::vector<Reference> expansion = {{assign, {22, 5}, kRoleCall},
                                              {macro, {22, 5}, kRoleReference}};
    auto onMacro = symbolAt({}, expansion, {22, 9}, gtestNames, expect);
    REQUIRE(onMacro);
    CHECK(onMacro->usrHash == macro);
    CHECK_FALSE(symbolAt({}, {{assign, {22, 5}, kRoleCall}}, {22, 9}, gtestNames, expect));
    // The expansion also uses a symbol the store has no declaration of (no name), reported
    // first: the macro still wins (found on fmtlib's EXPECT_THROW_MSG by bench/lsp_agreement).
    const uint64_t undeclared = hash64("c:@N@testing@N@internal@F@undeclared#");
    const NameLookup someNames = [&](uint64_t usr) -> std::optional<std::string> {
        return usr == macro ? std::optional<std::string>("EXPECT_LEVELDB_OK") : std::nullopt;
    };
    auto withUnknown =
        symbolAt({}, {{undeclared, {22, 5}, kRoleCall}, {macro, {22, 5}, kRoleReference}}, {22, 9},
                 someNames, expect);
    REQUIRE(withUnknown);
    CHECK(withUnknown->usrHash == macro);
    // ASSERT_* also declares a local there (`gtest_ar`): not what the cursor is on either.
    Symbol gtestAr;
    gtestAr.usr = "c:autocompact_test.cc@600@F@f#@gtest_ar";
    gtestAr.name = "gtest_ar";
    gtestAr.location = {22, 5};
    gtestAr.flags = kDefinition | kLocal;
    auto onMacroDecl = symbolAt({gtestAr}, expansion, {22, 9}, gtestNames, expect);
    REQUIRE(onMacroDecl);
    CHECK(onMacroDecl->usrHash == macro);
    // "    return Slice(data, n);": the class and its constructor's call start at the same name;
    // the class is what the cursor is on (clangd's answer; found on LevelDB by lsp_agreement).
    const uint64_t sliceClass = hash64("c:@N@leveldb@S@Slice");
    const uint64_t sliceCtor = hash64("c:@N@leveldb@S@Slice@F@Slice#*1C#l#");
    const NameLookup sliceNames = [&](uint64_t) -> std::optional<std::string> { return "Slice"; };
    for (const auto& order : {std::vector<Reference>{{sliceCtor, {3, 12}, kRoleCall},
                                                     {sliceClass, {3, 12}, kRoleReference}},
                              std::vector<Reference>{{sliceClass, {3, 12}, kRoleReference},
                                                     {sliceCtor, {3, 12}, kRoleCall}}}) {
        auto onTemporary = symbolAt({}, order, {3, 14}, sliceNames, "    return Slice(data, n);");
        REQUIRE(onTemporary);
        CHECK(onTemporary->usrHash == sliceClass);
    }
    // A specialization is spelled without its arguments; a destructor with its '~'.
    Symbol box;
    box.usr = "c:@N@geo@S@Box>#I";
    box.name = "Box<int>";
    box.location = {1, 8};
    auto onBox = symbolAt({box}, {}, {1, 9}, names, "struct Box<int> {");
    REQUIRE(onBox);
    CHECK(onBox->usrHash == box.usrHash());
    Symbol dtor;
    dtor.usr = "c:@N@geo@S@Shape@F@~Shape#";
    dtor.name = "~Shape";
    dtor.location = {1, 8};
    auto onDtor = symbolAt({dtor}, {}, {1, 10}, names, "Shape::~Shape() {}");
    REQUIRE(onDtor);
    CHECK(onDtor->usrHash == dtor.usrHash());
    // libclang also reports the class at the name after '~': the destructor is what the cursor
    // is on, although the class's name is shorter (found on fmtlib by bench/lsp_agreement).
    const uint64_t shapeClass = hash64("c:@N@geo@S@Shape");
    const NameLookup shapeName = [&](uint64_t usr) -> std::optional<std::string> {
        return usr == shapeClass ? std::optional<std::string>("Shape") : std::nullopt;
    };
    const std::vector<Reference> classAtDtor = {{shapeClass, {1, 9}, kRoleReference}};
    for (uint32_t column : {8u, 9u, 12u}) {
        auto onName = symbolAt({dtor}, classAtDtor, {1, column}, shapeName, "Shape::~Shape() {}");
        REQUIRE(onName);
        CHECK(onName->usrHash == dtor.usrHash());
    }
    auto explicitCall =
        symbolAt({}, {{assign, {1, 7}, kRoleCall}}, {1, 9}, gtestNames, "    h.operator=(m);");
    REQUIRE(explicitCall);
    CHECK(explicitCall->usrHash == assign);
}

TEST_CASE("store records survive JSON unchanged", "[protocol]") {
    Symbol s;
    s.usr = "c:@N@geo@S@Box>#T";
    s.name = "Box";
    s.qualifiedName = "geo::Box";
    s.kind = SymbolKind::Class;
    s.flags = kDefinition | kTemplate;
    s.location = {39, 29};
    s.extent = {{39, 23}, {43, 2}};
    CHECK(symbolFromJson(symbolToJson(s)) == s);
    const Reference r{0xfedcba9876543210ull, {5, 7}, kRoleCall | kRoleImplicit};
    CHECK(referenceFromJson(referenceToJson(r)) == r);
    CHECK(usrHashToJson(0xfedcba9876543210ull) == "fedcba9876543210");
    CHECK(usrHashFromJson("fedcba9876543210") == std::optional<uint64_t>(0xfedcba9876543210ull));
    CHECK_FALSE(usrHashFromJson("12"));
    NameMatch m{MatchRank::Substring, {s, "/x/shapes.h"}, 3};
    auto back = nameMatchFromJson(nameMatchToJson(m));
    REQUIRE(back);
    CHECK(back->rank == m.rank);
    CHECK(back->best.symbol == s);
    CHECK(back->best.path == "/x/shapes.h");
    CHECK(back->occurrences == 3);
    QJsonObject broken = symbolToJson(s);
    broken.remove("location");
    CHECK_FALSE(symbolFromJson(broken));
}

TEST_CASE("socket directories: private or refused", "[protocol]") {
    test::TempDir dir;
    std::string error;
    const std::filesystem::path fresh = dir.path() / "sockets";
    REQUIRE(ensurePrivateDirectory(fresh, &error));
    struct stat st;
    REQUIRE(::stat(fresh.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);

    ::chmod(fresh.c_str(), 0755);
    CHECK_FALSE(ensurePrivateDirectory(fresh, &error));
    CHECK(error == "socket directory '" + fresh.string() +
                       "' has mode 0755; it must be 0700 (chmod 700 '" + fresh.string() + "')");

    const std::filesystem::path link = dir.path() / "link";
    ::chmod(fresh.c_str(), 0700);
    std::filesystem::create_directory_symlink(fresh, link);
    CHECK_FALSE(ensurePrivateDirectory(link, &error));
    CHECK(error.find("is not a directory (or is a symlink)") != std::string::npos);

    // Owned by someone else: as root, give a directory away; otherwise /tmp is root's.
    std::filesystem::path foreign = "/tmp";
    if (::geteuid() == 0) {
        foreign = dir.path() / "foreign";
        std::filesystem::create_directory(foreign);
        ::chmod(foreign.c_str(), 0700);
        REQUIRE(::chown(foreign.c_str(), 65534, 65534) == 0);
    }
    CHECK_FALSE(ensurePrivateDirectory(foreign, &error));
    CHECK(error.find("' is owned by uid ") != std::string::npos);
    CHECK(error.find("not by this user") != std::string::npos);
}

TEST_CASE("framing: a stream is judged the same however its bytes arrive", "[protocol]") {
    // Found by tests/fuzz/protocol_fuzzer (seed crash-bracket-then-whole-header): unframed JSON
    // and an oversized header were refused only while the header's blank line had not arrived,
    // so the same stream failed or passed depending on how the socket split it.
    auto judge = [](const QByteArray& stream, qsizetype piece) {
        FrameReader reader;
        QByteArray body;
        std::string error;
        std::vector<QByteArray> bodies;
        for (qsizetype at = 0; at < stream.size(); at += piece) {
            reader.append(stream.mid(at, piece));
            FrameReader::Status s;
            while ((s = reader.next(&body, &error)) == FrameReader::Status::Message)
                bodies.push_back(body);
            if (s == FrameReader::Status::Error)
                return std::make_pair(bodies, true);
        }
        return std::make_pair(bodies, false);
    };
    const QByteArray unframed = "[Content-Type: x\r\nContent-Length: 2\r\n\r\n{}";
    const QByteArray bigHeader =
        "X-Pad: " + QByteArray(kMaxHeaderBytes, 'p') + "\r\nContent-Length: 2\r\n\r\n{}";
    const QByteArray good = "Content-Length: 2\r\n\r\n{}";
    for (const QByteArray& stream : {unframed, bigHeader, good}) {
        INFO(stream.left(40).toStdString());
        const auto whole = judge(stream, stream.size());
        CHECK(whole.second == (stream != good));
        for (qsizetype piece : {1, 7})
            CHECK(judge(stream, piece) == whole);
    }
}
