#include "bench/run_record.h"

namespace symdex::bench {

double percentile(const LatencyFigures& latency, size_t i) {
    const double values[] = {latency.p50, latency.p95, latency.p99, latency.p999, latency.max};
    return i < kPercentileNames.size() ? values[i] : 0;
}

bool isSymdexConfig(const std::string& config) {
    return config == "per-file" || config == "global";
}

std::string configLabel(const std::string& config) {
    return isSymdexConfig(config) ? "symdex " + config : config;
}

QJsonObject latencyToJson(const LatencyFigures& latency) {
    QJsonObject json{{"count", double(latency.count)}};
    for (size_t i = 0; i < kPercentileNames.size(); ++i)
        json[QString(kPercentileNames[i]) + "_us"] = percentile(latency, i);
    return json;
}

LatencyFigures latencyFromJson(const QJsonObject& json) {
    LatencyFigures l;
    l.count = uint64_t(json["count"].toDouble());
    l.p50 = json["p50_us"].toDouble();
    l.p95 = json["p95_us"].toDouble();
    l.p99 = json["p99_us"].toDouble();
    l.p999 = json["p999_us"].toDouble();
    l.max = json["max_us"].toDouble();
    return l;
}

QJsonObject symdexFiguresToJson(const SymdexFigures& f) {
    return QJsonObject{
        {"tus_parsed", double(f.tusParsed)},
        {"tus_with_errors", double(f.tusWithErrors)},
        {"tus_failed", double(f.tusFailed)},
        {"files", double(f.files)},
        {"symbols", double(f.symbols)},
        {"references", double(f.references)},
        {"index_wall_s", f.indexWallSeconds},
        {"parse_wall_s", f.parseWallSeconds},
        {"lock_acquisitions", f.lockAcquisitions},
        {"lock_contended", f.lockContended},
        {"lock_wait_s", f.lockWaitSeconds},
        {"store_bytes", f.storeBytes},
        {"probe_user_s", f.probeUserSeconds},
        {"probe_sys_s", f.probeSysSeconds},
        {"latency_indexing", QJsonObject{{"name", latencyToJson(f.nameIndexing)},
                                         {"definition", latencyToJson(f.definitionIndexing)}}},
        {"latency_idle", QJsonObject{{"name", latencyToJson(f.nameIdle)},
                                     {"definition", latencyToJson(f.definitionIdle)}}},
    };
}

SymdexFigures symdexFiguresFromJson(const QJsonObject& json) {
    SymdexFigures f;
    f.tusParsed = size_t(json["tus_parsed"].toDouble());
    f.tusWithErrors = size_t(json["tus_with_errors"].toDouble());
    f.tusFailed = size_t(json["tus_failed"].toDouble());
    f.files = size_t(json["files"].toDouble());
    f.symbols = size_t(json["symbols"].toDouble());
    f.references = size_t(json["references"].toDouble());
    f.indexWallSeconds = json["index_wall_s"].toDouble();
    f.parseWallSeconds = json["parse_wall_s"].toDouble();
    f.lockAcquisitions = json["lock_acquisitions"].toDouble();
    f.lockContended = json["lock_contended"].toDouble();
    f.lockWaitSeconds = json["lock_wait_s"].toDouble();
    f.storeBytes = json["store_bytes"].toDouble();
    f.probeUserSeconds = json["probe_user_s"].toDouble();
    f.probeSysSeconds = json["probe_sys_s"].toDouble();
    const QJsonObject indexing = json["latency_indexing"].toObject();
    const QJsonObject idle = json["latency_idle"].toObject();
    f.nameIndexing = latencyFromJson(indexing["name"].toObject());
    f.definitionIndexing = latencyFromJson(indexing["definition"].toObject());
    f.nameIdle = latencyFromJson(idle["name"].toObject());
    f.definitionIdle = latencyFromJson(idle["definition"].toObject());
    return f;
}

QJsonObject runRecordToJson(const RunRecord& run) {
    QJsonObject json{{"config", QString::fromStdString(run.config)},
                     {"threads", double(run.threads)},
                     {"round", run.round},
                     {"ok", run.ok},
                     {"wall_s", run.wallSeconds},
                     {"user_s", run.userSeconds},
                     {"sys_s", run.sysSeconds},
                     {"peak_rss_mib", run.peakRssMiB},
                     {"tus_expected", double(run.tusExpected)},
                     {"tus_indexed", double(run.tusIndexed)}};
    if (!run.ok)
        json["failure"] = QString::fromStdString(run.failure);
    if (run.symdex)
        json["symdex"] = symdexFiguresToJson(*run.symdex);
    return json;
}

} // namespace symdex::bench
