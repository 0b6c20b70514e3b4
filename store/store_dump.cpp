#include "store/store_dump.h"

#include <algorithm>
#include <map>

namespace symdex {

void dumpStore(const Store& store, std::ostream& out, const std::filesystem::path& root) {
    const StoreSnapshot snapshot = store.snapshot(); // one consistent state, dumped whole
    auto shown = [&](const std::string& path) {
        if (root.empty())
            return path;
        std::filesystem::path rel = std::filesystem::path(path).lexically_relative(root);
        return rel.empty() || rel.native().starts_with("..") ? path : rel.string();
    };
    std::map<std::string, FileRecord> files; // by path: ids depend on commit order
    std::map<uint32_t, std::string> pathOf;
    snapshot.forEachFile([&](uint32_t id, const FileRecord& f) {
        files.emplace(f.path, f);
        pathOf.emplace(id, f.path);
    });
    auto owner = [&](uint32_t id) {
        auto found = pathOf.find(id);
        return found == pathOf.end() ? std::string("-") : shown(found->second);
    };
    std::map<uint64_t, std::string> names;
    std::map<std::string, std::vector<Symbol>> symbols;
    for (const auto& [path, record] : files) {
        std::vector<Symbol> fileSymbols =
            snapshot.fileSymbols(path).value_or(std::vector<Symbol>{});
        for (const Symbol& s : fileSymbols)
            names.emplace(s.usrHash(), s.qualifiedName);
        symbols.emplace(path, std::move(fileSymbols));
    }
    for (const auto& [path, record] : files) {
        out << "file " << shown(path) << " hash " << std::hex << record.contentHash << std::dec
            << " symbols " << record.symbolCount << " references " << record.referenceCount
            << " owner " << owner(record.ownerFileId);
        if (record.errorCount || record.warningCount)
            out << " diagnostics " << record.errorCount << " errors " << record.warningCount
                << " warnings";
        out << "\n";
        for (const Symbol& s : symbols[path]) {
            out << shown(path) << ":" << s.location.line << ":" << s.location.column << ": "
                << kindDisplayName(s.kind, s.flags) << " " << s.qualifiedName
                << (s.isDefinition() ? " [definition]" : "") << " extent " << s.extent.begin.line
                << ":" << s.extent.begin.column << "-" << s.extent.end.line << ":"
                << s.extent.end.column << " " << s.usr << "\n";
            if (!s.signature.empty())
                out << "  signature " << s.signature << "\n";
            if (!s.comment.empty())
                out << "  comment " << s.comment << "\n";
        }
        auto nameOf = [&](uint64_t usrHash) {
            auto name = names.find(usrHash);
            return name == names.end() ? std::string("?") : name->second;
        };
        for (const Reference& r :
             snapshot.fileReferences(path).value_or(std::vector<Reference>{})) {
            out << shown(path) << ":" << r.location.line << ":" << r.location.column << ": "
                << roleName(r.roles) << " -> " << nameOf(r.usrHash);
            if (r.container)
                out << " in " << nameOf(r.container);
            out << "\n";
        }
    }
    std::map<std::string, TuRecord> tus;
    snapshot.forEachTu([&](const std::string& path, const TuRecord& tu) { tus.emplace(path, tu); });
    for (const auto& [path, tu] : tus)
        out << "tu " << shown(path) << " " << tuStatusName(tu.status) << " errors " << tu.errorCount
            << " warnings " << tu.warningCount << " files " << tu.fileIds.size() << "\n";
}

} // namespace symdex
