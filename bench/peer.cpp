#include "bench/peer.h"

#include "bench/ccls_peer.h"
#include "bench/clangd_peer.h"
#include "bench/floor_peer.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <set>
#include <stdexcept>

namespace symdex::bench {

const std::vector<std::string>& knownPeers() {
    static const std::vector<std::string> peers = {"floor", "ccls", "clangd", "clangd-16"};
    return peers;
}

std::unique_ptr<Peer> makePeer(const std::string& name, const PeerSetup& setup) {
    std::filesystem::create_directories(setup.workDirectory);
    if (name == "floor")
        return std::make_unique<FloorPeer>(setup);
    if (name == "ccls")
        return std::make_unique<CclsPeer>(setup);
    if (name == "clangd" || name == "clangd-16")
        return std::make_unique<ClangdPeer>(setup, name);
    throw std::runtime_error("unknown peer '" + name + "' (known: floor, ccls, clangd, clangd-16)");
}

void writeDeduplicatedDatabase(const CompileDatabase& db, const std::filesystem::path& dir) {
    QFile in(QString::fromStdString(db.path));
    if (!in.open(QIODevice::ReadOnly))
        throw std::runtime_error("cannot read " + db.path);
    const QJsonArray entries = QJsonDocument::fromJson(in.readAll()).array();
    std::set<std::string> wanted;
    for (const CompileCommand& c : db.commands)
        wanted.insert(c.file);
    // Resolved as compile_db.cpp resolves them, so "the first entry of each file" means the same.
    const std::string base = std::filesystem::absolute(db.path).parent_path().string();
    QJsonArray kept;
    for (const QJsonValue& value : entries) {
        const QJsonObject entry = value.toObject();
        const std::string directory =
            absolutePath(entry["directory"].toString().toStdString(), base);
        const std::string file =
            canonicalPath(absolutePath(entry["file"].toString().toStdString(), directory));
        if (wanted.erase(file))
            kept.append(entry);
    }
    std::filesystem::create_directories(dir);
    QFile out(QString::fromStdString((dir / "compile_commands.json").string()));
    if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        out.write(QJsonDocument(kept).toJson(QJsonDocument::Indented)) < 0)
        throw std::runtime_error("cannot write " + out.fileName().toStdString());
}

RunRecord peerRecord(const std::string& name, unsigned threads, int round, size_t tusExpected) {
    RunRecord run;
    run.config = name;
    run.threads = threads;
    run.round = round;
    run.tusExpected = tusExpected;
    return run;
}

} // namespace symdex::bench
