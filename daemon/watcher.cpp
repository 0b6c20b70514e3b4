#include "daemon/watcher.h"

#include <QFileInfo>

#include <fstream>
#include <sys/stat.h>
#include <utility>

namespace symdex::daemon {

size_t defaultWatchBudget() {
    std::ifstream in("/proc/sys/fs/inotify/max_user_watches");
    size_t max = 0;
    if (in >> max && max >= 2)
        return max / 2;
    return 4096;
}

namespace {

/// `dir` if it exists, else its nearest existing ancestor; empty when that would be "/" (a change
/// anywhere in "/" is no sign of the tree).
QString existingAncestor(QString dir) {
    while (!dir.isEmpty() && dir != "/") {
        if (QFileInfo(dir).isDir())
            return dir;
        const QString parent = QFileInfo(dir).path();
        if (parent == dir)
            break;
        dir = parent;
    }
    return {};
}

/// The directory's inode; 0 if it is not a directory (or does not exist).
quint64 directoryInode(const QString& dir) {
    struct stat st;
    if (::stat(dir.toLocal8Bit().constData(), &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    return quint64(st.st_ino);
}

std::chrono::nanoseconds ctimeOf(const struct stat& st) {
    return std::chrono::seconds(st.st_ctim.tv_sec) + std::chrono::nanoseconds(st.st_ctim.tv_nsec);
}

} // namespace

Watcher::Watcher(std::chrono::milliseconds debounce, size_t maxWatches, ChangesFn onChanges,
                 LogFn log, QObject* parent)
    : QObject(parent), maxWatches_(maxWatches), onChanges_(std::move(onChanges)),
      log_(std::move(log)) {
    debounce_.setSingleShot(true);
    debounce_.setInterval(debounce);
    connect(&debounce_, &QTimer::timeout, this, &Watcher::flush);
    connect(&watcher_, &QFileSystemWatcher::fileChanged, this, &Watcher::fileChanged);
    connect(&watcher_, &QFileSystemWatcher::directoryChanged, this, &Watcher::directoryChanged);
}

void Watcher::setPaths(const std::vector<std::string>& files,
                       const std::vector<std::string>& directories,
                       std::optional<std::chrono::nanoseconds> seenAt) {
    seenAt_ = seenAt;
    wantedFiles_.clear();
    wantedFileSet_.clear();
    for (const std::string& p : files) {
        const QString path = QString::fromStdString(p);
        if (!wantedFileSet_.contains(path)) {
            wantedFileSet_.insert(path);
            wantedFiles_ << path;
        }
    }
    wantedDirectories_.clear();
    for (const std::string& d : directories)
        wantedDirectories_ << QString::fromStdString(d);
    sync();
}

void Watcher::sync() {
    // In order of priority: the first file (the compile database), the directories (what appears
    // there is otherwise never seen), the files' directories, then the files. Which of them exist
    // is asked as they are watched, a slice at a time (syncSlice()).
    SyncJob job;
    QSet<QString> listed;
    auto add = [&](const QString& path, Check check) {
        if (!listed.contains(path)) {
            listed.insert(path);
            job.candidates.push_back({path, check});
        }
    };
    byDir_.clear();
    for (const QString& file : std::as_const(wantedFiles_))
        byDir_[QFileInfo(file).path()].insert(file);
    if (!wantedFiles_.isEmpty()) {
        const QString first = wantedFiles_.front();
        const QString dir = existingAncestor(QFileInfo(first).path());
        if (!dir.isEmpty())
            add(dir, Check::None);
        add(first, Check::Exists);
    }
    const QSet<QString> triggersBefore = std::exchange(triggerDirectories_, {});
    childDirectories_.clear();
    for (const QString& wanted : std::as_const(wantedDirectories_)) {
        const QString dir = existingAncestor(wanted);
        if (dir.isEmpty())
            continue;
        triggerDirectories_.insert(dir);
        add(dir, Check::None);
        if (dir != wanted)
            continue; // its ancestor sees it appear
        const QString parent = existingAncestor(QFileInfo(wanted).path());
        if (!parent.isEmpty())
            childDirectories_[parent][wanted] = directoryInode(wanted);
    }
    for (const QString& dir : std::as_const(triggerDirectories_))
        if (!triggersBefore.contains(dir))
            job.newTriggers.insert(dir); // its events were not counted before
    for (auto it = childDirectories_.cbegin(); it != childDirectories_.cend(); ++it)
        add(it.key(), Check::None);
    for (auto it = byDir_.cbegin(); it != byDir_.cend(); ++it)
        add(it.key(), Check::IsDirectory);
    for (const QString& file : std::as_const(wantedFiles_))
        add(file, Check::Exists);
    // What is no longer wanted goes first (inotify's watches are a per-user budget); what is
    // still listed stays until its slice says whether it still exists.
    QStringList remove;
    for (const QString& p : watcher_.files() + watcher_.directories())
        if (listed.contains(p))
            job.watchedBefore.insert(p);
        else
            remove << p;
    if (!remove.isEmpty())
        watcher_.removePaths(remove);
    job_ = std::move(job);
    ++syncGeneration_;
    // The first slice at once: a small tree is watched before sync() returns, a large one
    // within a few turns of the event loop, each short enough for the requests between them.
    syncSlice(syncGeneration_);
}

void Watcher::syncSlice(uint64_t generation) {
    if (!job_ || generation != syncGeneration_)
        return; // a newer sync() took over
    SyncJob& job = *job_;
    QStringList addNow;
    QStringList recheck; // newly watched, or a trigger now and not before
    const size_t end = std::min(job.candidates.size(), job.next + kSyncSlice);
    for (; job.next < end; ++job.next) {
        const Candidate& c = job.candidates[job.next];
        if ((c.check == Check::Exists && !QFileInfo::exists(c.path)) ||
            (c.check == Check::IsDirectory && !QFileInfo(c.path).isDir()))
            continue;
        if (job.kept.size() >= maxWatches_) {
            ++job.leftOut;
            continue;
        }
        job.kept.insert(c.path);
        if (!job.watchedBefore.contains(c.path))
            addNow << c.path;
        else if (job.newTriggers.contains(c.path))
            recheck << c.path;
    }
    if (!addNow.isEmpty()) {
        const QStringList failed = watcher_.addPaths(addNow);
        job.leftOut += size_t(failed.size()); // the limit reached early
        for (const QString& path : std::as_const(addNow))
            if (!failed.contains(path))
                recheck << path;
    }
    // Watched from now on, each of these: a change after its look here gets an event. A change
    // between the run's look and now gets none, and the run may have seen the path as it was:
    // its ctime tells. (Only after the watch is in place: a change between this look and the
    // watch would be missed by both.)
    if (seenAt_)
        for (const QString& path : std::as_const(recheck)) {
            struct stat st;
            if (::stat(path.toLocal8Bit().constData(), &st) == 0 && ctimeOf(st) >= *seenAt_)
                changed(path);
        }
    if (job.next < job.candidates.size()) {
        QTimer::singleShot(0, this, [this, generation] { syncSlice(generation); });
        return;
    }
    QStringList remove;
    for (const QString& p : std::as_const(job.watchedBefore))
        if (!job.kept.contains(p))
            remove << p;
    if (!remove.isEmpty())
        watcher_.removePaths(remove);
    const size_t leftOut = job.leftOut;
    const size_t total = job.kept.size() + leftOut;
    job_.reset();
    if (leftOut != lastLeftOut_ && log_) {
        if (leftOut)
            log_("cannot watch " + std::to_string(leftOut) + " of " + std::to_string(total) +
                 " paths (inotify: fs.inotify.max_user_watches is " +
                 std::to_string(defaultWatchBudget() * 2) +
                 ", half of it is used at most); "
                 "changes there are seen at the next run (didSave, symdex/index); raise it with "
                 "sysctl fs.inotify.max_user_watches=N");
        else
            log_("all " + std::to_string(total) + " paths are watched again");
    }
    lastLeftOut_ = leftOut;
}

void Watcher::fileChanged(const QString& path) {
    if (!wantedFileSet_.contains(path))
        return;
    // A file replaced by rename is no longer watched: watch the new one.
    if (!watcher_.files().contains(path) && QFileInfo::exists(path))
        watcher_.addPath(path);
    changed(path);
}

void Watcher::directoryChanged(const QString& dir) {
    if (triggerDirectories_.contains(dir) || !QFileInfo(dir).isDir()) {
        changed(dir); // something appeared or went (or the directory itself went)
        resync_ = true;
    }
    const auto children = childDirectories_.constFind(dir);
    if (children != childDirectories_.cend())
        for (auto it = children->cbegin(); it != children->cend(); ++it)
            if (directoryInode(it.key()) != it.value()) { // moved away, back, or replaced
                changed(it.key());
                resync_ = true;
            }
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
    if (resync_) { // before the run: a directory that appeared is watched from now on
        resync_ = false;
        sync();
    }
    std::vector<std::string> paths;
    for (const QString& p : std::as_const(pending_))
        paths.push_back(p.toStdString());
    pending_.clear();
    std::sort(paths.begin(), paths.end());
    if (!paths.empty())
        onChanges_(std::move(paths));
}

} // namespace symdex::daemon
