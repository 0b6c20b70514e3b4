// Watching the indexed files and the compile database (QFileSystemWatcher, inotify on Linux),
// debounced: a burst of changes (a save, a checkout, a build regenerating the database) becomes
// one call with every path that changed.
//
// Editors that save by writing a new file and renaming it over the old one replace the inode
// inotify watched, and QFileSystemWatcher drops the path: the path is re-added when it exists
// again, and its directory is watched too so a file that reappears later is noticed.
#pragma once

#include <QFileSystemWatcher>
#include <QObject>
#include <QSet>
#include <QString>
#include <QTimer>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace symdex::daemon {

class Watcher : public QObject {
    Q_OBJECT
public:
    using ChangesFn = std::function<void(std::vector<std::string> changedPaths)>;

    /// `onChanges` runs on the Qt thread, `debounce` after the last change of a burst.
    Watcher(std::chrono::milliseconds debounce, ChangesFn onChanges, QObject* parent = nullptr);

    /// Watches exactly `paths` from now on (files; missing ones are watched once they appear).
    void setFiles(const std::vector<std::string>& paths);
    size_t watchedFiles() const { return size_t(watcher_.files().size()); }

private:
    void fileChanged(const QString& path);
    void directoryChanged(const QString& dir);
    void changed(const QString& path);
    void flush();

    QFileSystemWatcher watcher_;
    QSet<QString> wanted_;                ///< the files to watch
    QHash<QString, QSet<QString>> byDir_; ///< directory -> wanted files in it
    QSet<QString> pending_;               ///< changed since the last flush
    QTimer debounce_;
    ChangesFn onChanges_;
};

} // namespace symdex::daemon
