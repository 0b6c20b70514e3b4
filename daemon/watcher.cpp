#include "daemon/watcher.h"

#include <QFileInfo>

namespace symdex::daemon {

Watcher::Watcher(std::chrono::milliseconds debounce, ChangesFn onChanges, QObject* parent)
    : QObject(parent), onChanges_(std::move(onChanges)) {
    debounce_.setSingleShot(true);
    debounce_.setInterval(debounce);
    connect(&debounce_, &QTimer::timeout, this, &Watcher::flush);
    connect(&watcher_, &QFileSystemWatcher::fileChanged, this, &Watcher::fileChanged);
    connect(&watcher_, &QFileSystemWatcher::directoryChanged, this, &Watcher::directoryChanged);
}

void Watcher::setFiles(const std::vector<std::string>& paths) {
    QSet<QString> next;
    for (const std::string& p : paths)
        next.insert(QString::fromStdString(p));
    QStringList gone, added;
    for (const QString& p : std::as_const(wanted_))
        if (!next.contains(p))
            gone << p;
    for (const QString& p : std::as_const(next))
        if (!wanted_.contains(p))
            added << p;
    wanted_ = std::move(next);

    QHash<QString, QSet<QString>> byDir;
    for (const QString& p : std::as_const(wanted_))
        byDir[QFileInfo(p).path()].insert(p);
    QStringList oldDirs, newDirs;
    for (auto it = byDir_.cbegin(); it != byDir_.cend(); ++it)
        if (!byDir.contains(it.key()))
            oldDirs << it.key();
    for (auto it = byDir.cbegin(); it != byDir.cend(); ++it)
        if (!byDir_.contains(it.key()))
            newDirs << it.key();
    byDir_ = std::move(byDir);

    const QStringList watched = watcher_.files() + watcher_.directories();
    QStringList remove;
    for (const QString& p : gone + oldDirs)
        if (watched.contains(p))
            remove << p;
    if (!remove.isEmpty())
        watcher_.removePaths(remove);
    QStringList add;
    for (const QString& p : added + newDirs)
        if (QFileInfo::exists(p))
            add << p;
    if (!add.isEmpty())
        watcher_.addPaths(add); // paths that cannot be watched are skipped, not fatal
}

void Watcher::fileChanged(const QString& path) {
    if (!wanted_.contains(path))
        return;
    // A file replaced by rename is no longer watched: watch the new one.
    if (!watcher_.files().contains(path) && QFileInfo::exists(path))
        watcher_.addPath(path);
    changed(path);
}

void Watcher::directoryChanged(const QString& dir) {
    const QStringList files = watcher_.files();
    const QSet<QString> watchedFiles(files.begin(), files.end());
    for (const QString& path : byDir_.value(dir)) {
        const bool exists = QFileInfo::exists(path);
        const bool watched = watchedFiles.contains(path);
        if (exists && !watched) { // (re)appeared: created, or renamed into place
            watcher_.addPath(path);
            changed(path);
        } else if (!exists && watched) {
            changed(path);
        }
    }
}

void Watcher::changed(const QString& path) {
    pending_.insert(path);
    debounce_.start(); // restarts: fires `debounce` after the last change
}

void Watcher::flush() {
    std::vector<std::string> paths;
    for (const QString& p : std::as_const(pending_))
        paths.push_back(p.toStdString());
    pending_.clear();
    std::sort(paths.begin(), paths.end());
    if (!paths.empty())
        onChanges_(std::move(paths));
}

} // namespace symdex::daemon
