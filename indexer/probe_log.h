// The paths a parse looked for and did not find: what makes a TU out of date when a file appears
// (a generated header, a header that now shadows another earlier in the include path, an include
// directory created after the parse, a compiler installation the driver probes for).
//
// libclang has no API for failed lookups, so they are taken where libLLVM asks the C library:
// this module defines open(), open64(), stat(), stat64(), lstat(), lstat64(), access(), opendir()
// and realpath() for the executable (exported with LINKER:--export-dynamic-symbol, so that
// libLLVM's calls bind to them), passes each call to the C library's function (dlsym(RTLD_NEXT))
// and notes the path when the call fails with ENOENT or ENOTDIR. libLLVM 16 makes its lookups
// with exactly these (checked with an LD_PRELOAD log of a parse: clang's FileManager open()s an
// include candidate and stat()s a directory; the driver uses stat(), access(), opendir() and
// realpath()); glibc's own internal calls do not go through them.
//
// Where the notes go:
// Besides, a successful open() or stat() of a path that is itself a symlink is noted with where
// it led ("@name\ttarget\n" for the worker), so that a retargeted link makes the TU out of
// date even when the file was reached by another name too (libclang keeps one name per file).
//
// - symdex-worker (reportProbesTo): appended to the worker's memory file as "?path\n" lines,
//   beside the reached files (worker_protocol.h), from whichever thread probes.
// - in-process parses (ProbeRecording): libclang parses on a thread of its own, created for each
//   clang_indexSourceFile call (its crash-recovery thread), so a parse's notes are the notes of
//   that thread: while any recording is armed, each thread keeps its notes in a thread-local
//   list; the parse's first callback binds its thread to the recording, which takes that list
//   and every later note of the thread. Nothing is noted while no recording is armed.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace symdex {

/// The failed probes of one in-process parse. Construct it on the thread that calls libclang,
/// before the call; bindThisThread() from the parse's callbacks.
class ProbeRecording {
public:
    ProbeRecording();
    ~ProbeRecording();
    ProbeRecording(const ProbeRecording&) = delete;
    ProbeRecording& operator=(const ProbeRecording&) = delete;

    /// The calling thread's notes so far, and all its later ones while this recording lives, go
    /// to this recording. Cheap when the thread is bound already.
    void bindThisThread();
    /// The absent paths noted, absolute, sorted and without repeats. Call after the parse.
    std::vector<std::string> take();
    /// The symlinks the parse opened or stat()ed files through, as (name, where it led then).
    std::vector<std::pair<std::string, std::string>> takeLinks();

    struct Sink;

private:
    std::shared_ptr<Sink> sink_;
};

/// symdex-worker: while `fd` is not -1, every failed probe of the process is appended to it
/// (O_APPEND) as "?path\n", and ProbeRecording records nothing.
void reportProbesTo(int fd);

/// symdex-worker: open() for reading becomes non-blocking and refuses (ENOTSUP) what is not a
/// regular file or a directory: an #include of a FIFO would block the parse until something
/// writes to it, one of /dev/zero would read until memory runs out.
void guardOpens();

} // namespace symdex
