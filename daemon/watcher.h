// Watching the tree (QFileSystemWatcher, inotify on Linux), debounced: a burst of changes (a save,
// a checkout, a build regenerating the database) becomes one call with every path that changed.
//
// Two kinds of paths. Files (the indexed files and the compile database) are watched for their
// content. Directories (those of the database's entries, its include directories, those of the
// indexed files) are watched for files that appear or go: a generated header, an entry's file
// that was missing, a source moved away and back. Any change in one is reported as the directory
// itself; the indexer then decides what is out of date. A directory that does not exist yet is
// covered by its nearest existing ancestor until it appears (a build creating gen/ and then
// gen/version.h). A directory's own renaming or removal (a checkout moving src/ away and back) is
// not reported by its own watch, so each one's parent is watched too, and an event there counts
// when a wanted directory in it came, went or became another directory.
//
// Editors that save by writing a new file and renaming it over the old one replace the inode
// inotify watched, and QFileSystemWatcher drops the path: the path is re-added when it exists
// again.
//
// inotify watches are a per-user limit (fs.inotify.max_user_watches) shared with editors and
// other tools: at most `maxWatches` paths are watched, in the order of priority given; the rest
// are left out with one log line, not a failure.
#pragma once

#include <QFileSystemWatcher>
#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace symdex::daemon {

/// Half of fs.inotify.max_user_watches (the rest is left to other programs of the user); 4096
/// when it cannot be read.
size_t defaultWatchBudget();

class Watcher : public QObject {
    Q_OBJECT
public:
    using ChangesFn = std::function<void(std::vector<std::string> changedPaths)>;
    using LogFn = std::function<void(const std::string& line)>;

    /// `onChanges` runs on the Qt thread, `debounce` after the last change of a burst. `log` is
    /// told when paths cannot be watched.
    Watcher(std::chrono::milliseconds debounce, size_t maxWatches, ChangesFn onChanges, LogFn log,
            QObject* parent = nullptr);

    /// Watches exactly these from now on, each list in order of priority, files before
    /// directories' share of what is left: `files` for their content (missing ones once they
    /// appear), `directories` for what appears in them (missing ones through an ancestor).
    ///
    /// `seenAt`: when the paths were last looked at (the run that listed them began then, by
    /// coarseRealTime()). A path not watched before whose ctime is not earlier may have changed
    /// between that look and its watch, unseen by both: it is reported as changed. Without it
    /// (the daemon's start, before any run) nothing is.
    void setPaths(const std::vector<std::string>& files,
                  const std::vector<std::string>& directories,
                  std::optional<std::chrono::nanoseconds> seenAt = std::nullopt);
    size_t watchedPaths() const {
        return size_t(watcher_.files().size() + watcher_.directories().size());
    }

private:
    void fileChanged(const QString& path);
    void directoryChanged(const QString& dir);
    void changed(const QString& path);
    void flush();
    /// Brings the inotify watches in line with the wanted files and directories as they exist now:
    /// the first kSyncSlice paths at once, the rest kSyncSlice a turn of the event loop (the
    /// daemon's thread also reads requests: at 2M names, 6,034 paths in one go held them 106-154
    /// ms).
    void sync();
    void syncSlice(uint64_t generation);

    static constexpr size_t kSyncSlice = 256;
    enum class Check { None, Exists, IsDirectory };
    struct Candidate {
        QString path;
        Check check;
    };
    /// A sync() under way.
    struct SyncJob {
        std::vector<Candidate> candidates; ///< in order of priority
        size_t next = 0;                   ///< the first not looked at yet
        QSet<QString> watchedBefore;       ///< watched when it began
        QSet<QString> newTriggers;         ///< trigger directories now that were not before
        QSet<QString> kept;                ///< to be watched (within the budget)
        size_t leftOut = 0;
    };
    std::optional<SyncJob> job_;
    /// setPaths()'s `seenAt`, kept for the syncs that follow (a directory appearing): what they
    /// begin to watch may have changed since then too.
    std::optional<std::chrono::nanoseconds> seenAt_;
    uint64_t syncGeneration_ = 0;

    QFileSystemWatcher watcher_;
    QStringList wantedFiles_;             ///< the files to watch, in order of priority
    QSet<QString> wantedFileSet_;         ///< the same, for lookups
    QStringList wantedDirectories_;       ///< the directories to watch, in order of priority
    QHash<QString, QSet<QString>> byDir_; ///< directory -> wanted files in it
    QSet<QString> triggerDirectories_;    ///< watched directories where any change counts
    /// watched parent -> wanted directories in it, with the inode each had at the last sync (0:
    /// missing)
    QHash<QString, QHash<QString, quint64>> childDirectories_;
    QSet<QString> pending_; ///< changed since the last flush
    bool resync_ = false;   ///< a watched directory changed: directories may have come or gone
    QTimer debounce_;
    const size_t maxWatches_;
    ChangesFn onChanges_;
    LogFn log_;
    size_t lastLeftOut_ = 0; ///< paths left out at the last sync, to log only changes
};

} // namespace symdex::daemon
