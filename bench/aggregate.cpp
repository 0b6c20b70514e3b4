#include "bench/aggregate.h"

#include <algorithm>
#include <functional>

namespace symdex::bench {

namespace {

using RunFigure = std::function<double(const RunRecord&)>;

Spread spreadOver(const std::vector<const RunRecord*>& runs, const RunFigure& figure) {
    std::vector<double> values;
    for (const RunRecord* run : runs)
        values.push_back(figure(*run));
    return spreadOf(std::move(values));
}

double medianOver(const std::vector<const RunRecord*>& runs, const RunFigure& figure) {
    return spreadOver(runs, figure).median;
}

/// Each percentile's median over runs, of the latency `pick` selects.
LatencyFigures medianLatency(const std::vector<const RunRecord*>& runs,
                             LatencyFigures SymdexFigures::*pick) {
    auto of = [&](double LatencyFigures::*field) {
        return medianOver(runs, [&](const RunRecord& r) { return (*r.symdex).*pick.*field; });
    };
    LatencyFigures l;
    l.count = uint64_t(
        medianOver(runs, [&](const RunRecord& r) { return double(((*r.symdex).*pick).count); }));
    l.p50 = of(&LatencyFigures::p50);
    l.p95 = of(&LatencyFigures::p95);
    l.p99 = of(&LatencyFigures::p99);
    l.p999 = of(&LatencyFigures::p999);
    l.max = of(&LatencyFigures::max);
    return l;
}

void fillSymdexFigures(const std::vector<const RunRecord*>& ok, ResultRow* row) {
    auto median = [&](auto figure) {
        return medianOver(ok, [&](const RunRecord& r) { return figure(*r.symdex); });
    };
    const double wall = row->wall.median;
    row->symbolsPerSecond = ratio(median([](const SymdexFigures& f) { return f.symbols; }), wall);
    row->lockAcquisitions = median([](const SymdexFigures& f) { return f.lockAcquisitions; });
    row->contendedShare =
        median([](const SymdexFigures& f) { return ratio(f.lockContended, f.lockAcquisitions); });
    const unsigned threads = row->threads;
    row->waitShare = median([threads](const SymdexFigures& f) {
        return ratio(f.lockWaitSeconds, f.parseWallSeconds * threads);
    });
    row->storeMiB = median([](const SymdexFigures& f) { return f.storeBytes / (1 << 20); });
    row->nameIndexing = medianLatency(ok, &SymdexFigures::nameIndexing);
    row->definitionIndexing = medianLatency(ok, &SymdexFigures::definitionIndexing);
    row->nameIdle = medianLatency(ok, &SymdexFigures::nameIdle);
    row->definitionIdle = medianLatency(ok, &SymdexFigures::definitionIdle);
}

ResultRow rowOf(const std::string& config, unsigned threads, const std::vector<RunRecord>& runs) {
    ResultRow row;
    row.config = config;
    row.threads = threads;
    std::vector<const RunRecord*> ok;
    for (const RunRecord& run : runs) {
        if (run.config != config || run.threads != threads)
            continue;
        if (run.ok) {
            ok.push_back(&run);
        } else if (row.failedRuns++ == 0) {
            row.failure = run.failure;
        }
    }
    row.runs = int(ok.size());
    if (ok.empty())
        return row;
    row.wall = spreadOver(ok, [](const RunRecord& r) { return r.wallSeconds; });
    row.user = spreadOver(ok, [](const RunRecord& r) { return r.userSeconds; });
    row.sys = spreadOver(ok, [](const RunRecord& r) { return r.sysSeconds; });
    row.peakRssMiB = spreadOver(ok, [](const RunRecord& r) { return r.peakRssMiB; });
    row.cpuUtilisation = cpuUtilisation(row.user.median, row.sys.median, row.wall.median, threads);
    row.tusPerSecond = ratio(
        medianOver(ok, [](const RunRecord& r) { return double(r.tusIndexed); }), row.wall.median);
    if (std::all_of(ok.begin(), ok.end(), [](const RunRecord* r) { return r->symdex; }))
        fillSymdexFigures(ok, &row);
    return row;
}

} // namespace

std::vector<ResultRow> aggregateRuns(const std::vector<RunRecord>& runs) {
    std::vector<std::pair<std::string, unsigned>> keys;
    for (const RunRecord& run : runs)
        if (std::find(keys.begin(), keys.end(), std::pair(run.config, run.threads)) == keys.end())
            keys.emplace_back(run.config, run.threads);
    std::vector<ResultRow> rows;
    for (const auto& [config, threads] : keys)
        rows.push_back(rowOf(config, threads, runs));
    for (ResultRow& row : rows) {
        const ResultRow* base = findRow(rows, row.config, 1);
        if (base && base->hasFigures() && row.hasFigures()) {
            row.speedup = speedup(base->wall.median, row.wall.median);
            row.efficiency = parallelEfficiency(row.speedup, row.threads);
        }
        if (!isSymdexConfig(row.config) || !row.hasFigures())
            continue;
        for (const ResultRow& peer : rows)
            if (!isSymdexConfig(peer.config) && peer.threads == row.threads && peer.hasFigures())
                row.wallRatioToPeer[peer.config] = ratio(row.wall.median, peer.wall.median);
    }
    return rows;
}

const ResultRow* findRow(const std::vector<ResultRow>& rows, const std::string& config,
                         unsigned threads) {
    for (const ResultRow& row : rows)
        if (row.config == config && row.threads == threads)
            return &row;
    return nullptr;
}

} // namespace symdex::bench
