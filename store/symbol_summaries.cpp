#include "store/symbol_summaries.h"

#include "store/encoding.h"
#include "store/lmdb_layout.h"
#include "store/name_search.h"
#include "store/symbol_blocks.h"

#include <climits>

namespace symdex {

namespace {

bool isUpper(char c) {
    return c >= 'A' && c <= 'Z';
}

/// The summary of `symbol`, or nullopt if a summary cannot give it back exactly.
std::optional<SymbolSummary> summarize(const Symbol& symbol, std::string& qualifier) {
    const std::string& name = symbol.name;
    if (name.empty() || name.size() > 64 || symbol.location.column > UINT16_MAX ||
        !symbol.qualifiedName.ends_with(name))
        return std::nullopt;
    SymbolSummary row;
    for (size_t i = 0; i < name.size(); ++i) {
        if (static_cast<unsigned char>(name[i]) >= 0x80)
            return std::nullopt;
        if (isUpper(name[i]))
            row.upper |= uint64_t(1) << i;
    }
    row.usrHash = symbol.usrHash();
    row.line = symbol.location.line;
    row.column = uint16_t(symbol.location.column);
    row.kind = symbol.kind;
    row.flags = symbol.flags;
    qualifier.assign(symbol.qualifiedName, 0, symbol.qualifiedName.size() - name.size());
    return row;
}

} // namespace

SymbolSummaries::Rows SymbolSummaries::find(uint32_t file, uint32_t block,
                                            std::string_view bytes) const {
    const auto it = blocks_.find(keyOf(file, block));
    if (it == blocks_.end() || it->second.size != bytes.size() || it->second.hash != hash64(bytes))
        return {};
    return {rows_.data() + it->second.first, it->second.count};
}

SymbolSummaries::Rows SymbolSummaries::find(uint32_t file, uint32_t block) const {
    const auto it = blocks_.find(keyOf(file, block));
    if (it == blocks_.end())
        return {};
    return {rows_.data() + it->second.first, it->second.count};
}

Symbol SymbolSummaries::symbol(const SymbolSummary& row, std::string_view key) const {
    Symbol symbol;
    symbol.name.assign(key);
    for (size_t i = 0; i < symbol.name.size(); ++i)
        if (row.upper >> i & 1)
            symbol.name[i] = char(symbol.name[i] - 'a' + 'A');
    const std::string& qualifier = qualifiers_[row.qualifier];
    symbol.qualifiedName.reserve(qualifier.size() + symbol.name.size());
    symbol.qualifiedName.append(qualifier).append(symbol.name);
    symbol.kind = row.kind;
    symbol.flags = row.flags;
    symbol.location = {row.line, row.column};
    return symbol;
}

size_t SymbolSummaries::bytes() const {
    size_t total = rows_.capacity() * sizeof(SymbolSummary) +
                   blocks_.size() * (sizeof(Block) + sizeof(uint64_t) + 2 * sizeof(void*)) +
                   blocks_.bucket_count() * sizeof(void*);
    for (const std::string& q : qualifiers_)
        total += sizeof(std::string) + (q.capacity() > 15 ? q.capacity() + 1 : 0);
    total += files_.capacity() * sizeof(File) + fileIds_.bucket_count() * sizeof(void*);
    total += names_.capacity() + nameEnds_.capacity() * sizeof(uint32_t);
    total += (nameRowsAt_.capacity() + nameRows_.capacity()) * sizeof(uint32_t);
    for (const File& f : files_)
        total += (f.path.capacity() > 15 ? f.path.capacity() + 1 : 0) +
                 (f.known ? sizeof(std::string_view) + sizeof(uint32_t) + 2 * sizeof(void*) : 0);
    return total;
}

SymbolSummaries::Builder::Builder(std::shared_ptr<const SymbolSummaries> previous)
    : previous_(std::move(previous)), next_(std::make_shared<SymbolSummaries>()) {
    if (previous_) {
        next_->blocks_.reserve(previous_->blocks_.size());
        next_->rows_.reserve(previous_->rows_.size());
        remap_.assign(previous_->qualifiers_.size(), UINT32_MAX);
    }
}

uint32_t SymbolSummaries::Builder::qualifierId(std::string_view qualifier) {
    if (const auto it = qualifierIds_.find(qualifier); it != qualifierIds_.end())
        return it->second;
    const auto id = uint32_t(next_->qualifiers_.size());
    next_->qualifiers_.emplace_back(qualifier);
    qualifierIds_.emplace(next_->qualifiers_.back(), id);
    return id;
}

void SymbolSummaries::Builder::add(
    uint32_t file, uint32_t block, std::string_view bytes,
    const std::function<std::optional<std::vector<Symbol>>()>& decode) {
    const uint64_t key = keyOf(file, block);
    const uint64_t hash = hash64(bytes);
    Block entry{hash, uint32_t(bytes.size()), uint32_t(next_->rows_.size()), 0};
    if (previous_)
        if (const auto it = previous_->blocks_.find(key); it != previous_->blocks_.end() &&
                                                          it->second.hash == hash &&
                                                          it->second.size == bytes.size()) {
            // The same bytes: the same declarations. Their qualifiers get this generation's ids
            // (the previous generation's strings no block uses any more are left behind).
            for (uint32_t i = 0; i < it->second.count; ++i) {
                SymbolSummary row = previous_->rows_[it->second.first + i];
                uint32_t& id = remap_[row.qualifier];
                if (id == UINT32_MAX)
                    id = qualifierId(previous_->qualifiers_[row.qualifier]);
                row.qualifier = id;
                next_->rows_.push_back(row);
            }
            entry.count = it->second.count;
            next_->blocks_.emplace(key, entry);
            ++copied_;
            return;
        }
    std::optional<std::vector<Symbol>> symbols = decode();
    if (!symbols || symbols->empty() || symbols->size() > UINT32_MAX)
        return;
    ++decoded_;
    std::string qualifier;
    std::vector<SymbolSummary> rows;
    rows.reserve(symbols->size());
    for (const Symbol& symbol : *symbols) {
        std::optional<SymbolSummary> row = summarize(symbol, qualifier);
        if (!row)
            return; // searches decode this block, as without summaries
        row->qualifier = qualifierId(qualifier);
        row->file = file;
        rows.push_back(*row);
    }
    entry.count = uint32_t(rows.size());
    next_->rows_.insert(next_->rows_.end(), rows.begin(), rows.end());
    next_->blocks_.emplace(key, entry);
}

void SymbolSummaries::Builder::readFrom(uint64_t environment, uint64_t txnId) {
    if (next_->txnId_ == 0 && oneSnapshot_) {
        next_->environment_ = environment;
        next_->txnId_ = txnId;
    } else if (next_->environment_ != environment || next_->txnId_ != txnId) {
        oneSnapshot_ = false;
        next_->txnId_ = 0;
    }
}

std::optional<std::string_view> SymbolSummaries::indexedName(uint32_t id) const {
    if (id >= nameEnds_.size())
        return std::nullopt;
    const uint32_t begin = id ? nameEnds_[id - 1] : 0;
    if (begin == nameEnds_[id])
        return std::nullopt; // no name has this id (nameInBucket's empty slot)
    return std::string_view(names_).substr(begin, nameEnds_[id] - begin);
}

void SymbolSummaries::Builder::addNameBucket(uint32_t bucket, std::string_view bytes) {
    std::vector<uint32_t>& ends = next_->nameEnds_;
    const size_t first = size_t(bucket) * kNamesPerBucket;
    if (first < ends.size())
        return; // out of order: not a table this reads
    // Ids with no name before it.
    ends.resize(first, uint32_t(next_->names_.size()));
    // Each name apart, so that a search takes one by its id without reading those before it
    // in the bucket (nameInBucket() read up to 15 strings: ~500 instructions a candidate).
    Reader r(bytes);
    for (uint32_t slot = 0; slot < kNamesPerBucket && !r.atEnd(); ++slot) {
        const std::string_view name = r.string();
        if (r.failed())
            break; // the rest of a damaged bucket: no names (as nameInBucket() finds none)
        next_->names_.append(name);
        ends.push_back(uint32_t(next_->names_.size()));
    }
}

void SymbolSummaries::Builder::reserveNames(size_t buckets, size_t bytes) {
    next_->nameEnds_.reserve(buckets * kNamesPerBucket);
    next_->names_.reserve(bytes);
}

void SymbolSummaries::Builder::addNamesRow(const std::vector<NameVariant>& variants) {
    std::vector<uint32_t>& at = next_->nameRowsAt_;
    if (at.size() < next_->nameEnds_.size())
        at.resize(next_->nameEnds_.size(), kNotKept);
    auto notKept = [&](uint32_t id) {
        if (id < at.size())
            at[id] = kNotKept;
    };
    // Spellings that share a key are left to the `names` row: a search asks by one of them.
    if (variants.size() != 1) {
        for (const NameVariant& variant : variants)
            notKept(variant.nameId);
        return;
    }
    const NameVariant& name = variants[0];
    if (name.declarations.empty())
        return;
    std::vector<uint32_t>& rows = next_->nameRows_;
    const size_t first = rows.size();
    for (const NameEntry& entry : name.declarations) {
        const uint32_t block = entry.seq / uint32_t(kSymbolsPerBlock);
        const uint32_t index = entry.seq % uint32_t(kSymbolsPerBlock);
        const auto it = next_->blocks_.find(keyOf(entry.fileId, block));
        if (it == next_->blocks_.end() || index >= it->second.count ||
            it->second.first + index >= kLastOfName) {
            rows.resize(first); // a block not summarized: the row is read as before
            notKept(name.nameId);
            return;
        }
        rows.push_back(it->second.first + index);
    }
    rows.back() |= kLastOfName;
    if (name.nameId >= at.size())
        at.resize(size_t(name.nameId) + 1, kNotKept);
    at[name.nameId] = uint32_t(first);
    ++next_->namesKept_;
}

void SymbolSummaries::Builder::addFile(uint32_t id, const FileRecord& record) {
    if (id >= next_->files_.size())
        next_->files_.resize(size_t(id) + 1);
    File& file = next_->files_[id];
    file.path = record.path;
    file.known = true;
    file.indexed = record.contentHash != 0;
    file.ascii = record.asciiOnly;
}

std::shared_ptr<const SymbolSummaries> SymbolSummaries::Builder::finish() {
    // Paths by name once the files are all in (views into files_, which no longer moves).
    next_->fileIds_.reserve(next_->files_.size());
    for (uint32_t id = 0; id < next_->files_.size(); ++id)
        if (next_->files_[id].known)
            next_->fileIds_.emplace(next_->files_[id].path, id);
    next_->rows_.shrink_to_fit();
    next_->nameRows_.shrink_to_fit();
    next_->nameRowsAt_.shrink_to_fit();
    qualifierIds_.clear();
    previous_.reset();
    return std::move(next_);
}

} // namespace symdex
