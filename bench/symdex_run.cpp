#include "bench/symdex_run.h"

#include "bench/child_process.h"

#include <QJsonDocument>

#include <algorithm>
#include <stdexcept>

namespace symdex::bench {

namespace {

/// Runs `argv` and parses its stdout as a JSON object; throws with the reason otherwise.
QJsonObject runForJson(const std::vector<std::string>& argv, const std::filesystem::path& log,
                       ChildExit* exit) {
    ChildProcess::Options options;
    options.stderrPath = log;
    std::string output;
    *exit = runToCompletion(argv, options, &output);
    if (!exit->succeeded())
        throw std::runtime_error("symdex-bench bench-run: " + exit->describe());
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(output), &error);
    if (!doc.isObject())
        throw std::runtime_error("symdex-bench bench-run printed no JSON object: " +
                                 error.errorString().toStdString());
    return doc.object();
}

std::string countMismatch(const char* what, size_t got, size_t expected) {
    return got == expected ? std::string()
                           : std::string(what) + " " + std::to_string(got) + " instead of " +
                                 std::to_string(expected);
}

} // namespace

std::string verifySymdexRun(const SymdexFigures& f, const ExpectedStore& expected) {
    std::vector<std::string> problems;
    if (f.tusParsed != expected.tus)
        problems.push_back("parsed " + std::to_string(f.tusParsed) + " of " +
                           std::to_string(expected.tus) + " TUs");
    if (f.tusFailed > 0)
        problems.push_back(std::to_string(f.tusFailed) + " TUs failed or crashed");
    // The same store as the reference index, whatever the threads and lock mode (docs/design.md,
    // "Each header once": the result does not depend on timing).
    for (const std::string& p : {countMismatch("files", f.files, expected.files),
                                 countMismatch("symbols", f.symbols, expected.symbols),
                                 countMismatch("references", f.references, expected.references)})
        if (!p.empty())
            problems.push_back("store holds " + p);
    std::string out;
    for (const std::string& p : problems)
        out += (out.empty() ? "" : "; ") + p;
    return out;
}

RunRecord runSymdex(const SymdexRunSetup& setup, LockMode mode, unsigned threads, int round) {
    RunRecord run;
    run.config = std::string(lockModeName(mode));
    run.threads = threads;
    run.round = round;
    run.tusExpected = setup.expected.tus;
    const std::string store = setup.storeDirectory.string();
    const std::string names = setup.namesFile.string();
    const std::string rate = std::to_string(setup.queryRate);
    try {
        ChildExit exit;
        const QJsonObject cold =
            runForJson({setup.executable, "bench-run", "-p", setup.database, "--store", store,
                        "--threads", std::to_string(threads), "--lock-mode", run.config, "--names",
                        names, "--query-rate", rate, "--index-priority",
                        setup.lowPriority ? "low" : "normal", "--pch", setup.pch ? "auto" : "off"},
                       setup.logFile, &exit);
        SymdexFigures figures = symdexFiguresFromJson(cold["figures"].toObject());
        run.wallSeconds = exit.wallSeconds;
        // The query client is the load, not the indexer: its own CPU is left out.
        run.userSeconds = std::max(0.0, exit.userSeconds() - figures.probeUserSeconds);
        run.sysSeconds = std::max(0.0, exit.sysSeconds() - figures.probeSysSeconds);
        run.peakRssMiB = cold["peak_rss_mib"].toDouble();
        run.tusIndexed = figures.tusParsed - std::min(figures.tusParsed, figures.tusFailed);

        ChildExit idleExit;
        const QJsonObject idle =
            runForJson({setup.executable, "bench-run", "--idle", "--store", store, "--names", names,
                        "--query-rate", rate, "--queries", std::to_string(setup.idleQueries)},
                       setup.logFile, &idleExit);
        const SymdexFigures idleFigures = symdexFiguresFromJson(idle["figures"].toObject());
        figures.nameIdle = idleFigures.nameIdle;
        figures.definitionIdle = idleFigures.definitionIdle;
        run.failure = verifySymdexRun(figures, setup.expected);
        run.ok = run.failure.empty();
        run.symdex = figures;
    } catch (const std::exception& e) {
        run.ok = false;
        run.failure = e.what();
    }
    return run;
}

} // namespace symdex::bench
