/* corral._native: the C behind native/_native.cdef.
 *
 * Included once, as the prelude of the cffi-generated module (so it is a
 * header of static functions, not a separate translation unit).  The
 * declarations are the same on every platform; each platform's code is one
 * #if branch below, and what a platform lacks fails with ENOSYS and shows as
 * a CORRAL_HAS_* constant of 0.  Security decisions are not made here: the
 * resolver in src/corral/contained/_root.py makes them, and these functions
 * only make system calls and report errno.
 *
 * The module checks its own contract: every exported function validates
 * its pointers, lengths, flags and modes before any arithmetic on them and
 * fails with EINVAL (or its documented error code) rather than trusting its
 * caller.
 */

/* Feature macros before any header, so no prototype (memmem) depends on
 * which header came first.  This file is joined first (_native_build.py),
 * and the build passes -D_GNU_SOURCE too: cffi puts Python.h before it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#endif

/* Linux's openat2 / renameat2 values, the module's vocabulary everywhere. */
#define CORRAL_RESOLVE_NO_XDEV 0x01
#define CORRAL_RESOLVE_NO_MAGICLINKS 0x02
#define CORRAL_RESOLVE_NO_SYMLINKS 0x04
#define CORRAL_RESOLVE_BENEATH 0x08
#define CORRAL_RENAME_NOREPLACE 0x1
#define CORRAL_RENAME_EXCHANGE 0x2

#define CORRAL_KNOWN_RENAME_FLAGS (CORRAL_RENAME_NOREPLACE | CORRAL_RENAME_EXCHANGE)
#define CORRAL_KNOWN_RESOLVE (CORRAL_RESOLVE_NO_XDEV | CORRAL_RESOLVE_NO_MAGICLINKS | \
                              CORRAL_RESOLVE_NO_SYMLINKS | CORRAL_RESOLVE_BENEATH)

/* The open flags a caller may pass (anything else is EINVAL: an unknown
 * bit is either a mistake or a flag whose effect nothing here has thought
 * about).  Those a platform lacks are 0. */
#if defined(O_PATH)
#define CORRAL_O_PATH O_PATH
#else
#define CORRAL_O_PATH 0
#endif
#if defined(O_TMPFILE)
#define CORRAL_O_TMPFILE O_TMPFILE
#else
#define CORRAL_O_TMPFILE 0
#endif
#if defined(O_NOATIME)
#define CORRAL_O_NOATIME O_NOATIME
#else
#define CORRAL_O_NOATIME 0
#endif
#if defined(O_DIRECT)
#define CORRAL_O_DIRECT O_DIRECT
#else
#define CORRAL_O_DIRECT 0
#endif
#if defined(O_LARGEFILE)
#define CORRAL_O_LARGEFILE O_LARGEFILE
#else
#define CORRAL_O_LARGEFILE 0
#endif
#define CORRAL_OPEN_FLAGS (O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND |   \
                           O_NONBLOCK | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_SYNC |      \
                           O_DSYNC | CORRAL_O_PATH | CORRAL_O_TMPFILE | CORRAL_O_NOATIME |   \
                           CORRAL_O_DIRECT | CORRAL_O_LARGEFILE)
/* Opening a directory to search or list it: read-only, nothing created. */
#define CORRAL_DIR_OPEN_FLAGS (CORRAL_O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC |         \
                               O_NONBLOCK | O_NOCTTY | CORRAL_O_NOATIME | CORRAL_O_LARGEFILE)

/* Whether flags are open flags a caller may pass (CORRAL_OPEN_FLAGS) and
 * mode permission bits (07777) at most; else errno is EINVAL. */
static int corral_open_args_ok(long long flags, long long mode)
{
    if ((flags & ~(long long)(unsigned int)CORRAL_OPEN_FLAGS) != 0 || mode < 0 ||
        mode > 07777) {
        errno = EINVAL;
        return 0;
    }
    return 1;
}

/* Whether name is one path component: not empty, no '/', not "." or "..";
 * else errno is EINVAL. */
static int corral_is_name(const char *name)
{
    if (name == NULL || name[0] == '\0' || strchr(name, '/') != NULL ||
        (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))) {
        errno = EINVAL;
        return 0;
    }
    return 1;
}

static int corral_openat(int dirfd, const char *path, int flags, int mode)
{
    if (path == NULL || !corral_open_args_ok(flags, mode)) {
        errno = EINVAL;
        return -1;
    }
    return openat(dirfd, path, flags, (mode_t)mode);
}

#if defined(CORRAL_TEST_HOOKS)
/* Test builds only (tests/contained/native_variant.py): called between the
 * mkdirat and the open, so a test can plant a symlink in that window
 * deterministically instead of racing for it.  The module a user installs
 * has neither the hook nor a writable pointer to call. */
static void (*corral_create_directory_hook)(int, const char *) = NULL;

static void corral_set_create_directory_hook(void (*hook)(int, const char *))
{
    corral_create_directory_hook = hook;
}
#endif

static int corral_create_directory_at(int dirfd, const char *name, int mode,
                                      int open_flags, int *failed_step)
{
    int fd;

    if (failed_step == NULL || !corral_is_name(name) || mode < 0 || mode > 07777 ||
        (open_flags & ~CORRAL_DIR_OPEN_FLAGS) != 0) {
        errno = EINVAL;
        return -1;
    }
    *failed_step = 0;
    if (mkdirat(dirfd, name, (mode_t)mode) != 0) {
        *failed_step = 1;
        return -1;
    }
#if defined(CORRAL_TEST_HOOKS)
    if (corral_create_directory_hook != NULL)
        corral_create_directory_hook(dirfd, name);
#endif
    /* mkdirat cannot refuse a symlink; this open can.  Whatever replaced the
     * new directory in between (a symlink, a file) fails here, and the
     * caller is told the directory was made but is not what is there now. */
    fd = openat(dirfd, name, open_flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        *failed_step = 2;
        return -1;
    }
    return fd;
}

/* ------------------------------------------------------------------ Linux */
#if defined(__linux__)

static const int CORRAL_O_RESOLVE_BENEATH = 0;
static const int CORRAL_O_NOFOLLOW_ANY = 0;

/* openat2 got the same number on every architecture once the syscall tables
 * were unified (Linux 5.6), except alpha's, which is offset. */
#if defined(SYS_openat2)
#define CORRAL_SYS_OPENAT2 SYS_openat2
#elif !defined(__alpha__)
#define CORRAL_SYS_OPENAT2 437
#endif

#if defined(CORRAL_SYS_OPENAT2)
static const int CORRAL_HAS_OPENAT2 = 1;

/* struct open_how of <linux/openat2.h>, spelled out so old headers build */
struct corral_open_how {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};

static int corral_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode,
                          uint64_t resolve)
{
    struct corral_open_how how;
    if (path == NULL || (flags & ~(uint64_t)(unsigned int)CORRAL_OPEN_FLAGS) != 0 ||
        mode > 07777 || (resolve & ~(uint64_t)CORRAL_KNOWN_RESOLVE) != 0) {
        errno = EINVAL;
        return -1;
    }
    how.flags = flags;
    how.mode = mode;
    how.resolve = resolve;
    return (int)syscall(CORRAL_SYS_OPENAT2, dirfd, path, &how, sizeof how);
}
#else
static const int CORRAL_HAS_OPENAT2 = 0;

static int corral_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode,
                          uint64_t resolve)
{
    (void)dirfd; (void)path; (void)flags; (void)mode; (void)resolve;
    errno = ENOSYS;
    return -1;
}
#endif

#if defined(SYS_renameat2)
static const int CORRAL_HAS_RENAME_FLAGS = 1;
#else
static const int CORRAL_HAS_RENAME_FLAGS = 0;
#endif

static int corral_renameat(int olddirfd, const char *oldpath, int newdirfd,
                           const char *newpath, unsigned int flags)
{
    if (oldpath == NULL || newpath == NULL || (flags & ~(unsigned int)CORRAL_KNOWN_RENAME_FLAGS)) {
        errno = EINVAL;
        return -1;
    }
    if (flags == 0)
        return renameat(olddirfd, oldpath, newdirfd, newpath);
#if defined(SYS_renameat2)
    /* the syscall, not glibc's wrapper: musl and old glibc lack the wrapper;
     * CORRAL_RENAME_* are the kernel's own values */
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/* ----------------------------------------------------------------- Darwin */
#elif defined(__APPLE__)

/* Newer SDKs define these; an older SDK building for a newer kernel still
 * gets the fast path.  A kernel that does not know a flag may ignore it, so
 * the Python side uses neither until a probe shows it is honoured. */
#ifndef O_NOFOLLOW_ANY
#define O_NOFOLLOW_ANY 0x20000000 /* macOS 11 */
#endif
#ifndef O_RESOLVE_BENEATH
#define O_RESOLVE_BENEATH 0x00001000 /* macOS 15 */
#endif

#ifndef RENAME_SWAP
#define RENAME_SWAP 0x00000002
#define RENAME_EXCL 0x00000004
int renameatx_np(int, const char *, int, const char *, unsigned int);
#endif

static const int CORRAL_O_RESOLVE_BENEATH = O_RESOLVE_BENEATH;
static const int CORRAL_O_NOFOLLOW_ANY = O_NOFOLLOW_ANY;
static const int CORRAL_HAS_OPENAT2 = 1;
static const int CORRAL_HAS_RENAME_FLAGS = 1;

static int corral_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode,
                          uint64_t resolve)
{
    int oflags = (int)flags;

    if (path == NULL || (flags & ~(uint64_t)(unsigned int)CORRAL_OPEN_FLAGS) != 0 ||
        mode > 07777) {
        errno = EINVAL;
        return -1;
    }
    /* no Darwin counterpart for RESOLVE_NO_XDEV (or anything newer); magic
     * links do not exist here, so RESOLVE_NO_MAGICLINKS asks for nothing */
    if (resolve & ~(uint64_t)(CORRAL_RESOLVE_BENEATH | CORRAL_RESOLVE_NO_MAGICLINKS |
                              CORRAL_RESOLVE_NO_SYMLINKS)) {
        errno = ENOSYS;
        return -1;
    }
    if ((uint64_t)oflags != flags) {
        errno = EINVAL;
        return -1;
    }
    if (resolve & CORRAL_RESOLVE_BENEATH)
        oflags |= O_RESOLVE_BENEATH;
    if (resolve & CORRAL_RESOLVE_NO_SYMLINKS)
        oflags |= O_NOFOLLOW_ANY;
    return openat(dirfd, path, oflags, (mode_t)mode);
}

static int corral_renameat(int olddirfd, const char *oldpath, int newdirfd,
                           const char *newpath, unsigned int flags)
{
    unsigned int xflags = 0;

    if (oldpath == NULL || newpath == NULL || (flags & ~(unsigned int)CORRAL_KNOWN_RENAME_FLAGS)) {
        errno = EINVAL;
        return -1;
    }
    if (flags == 0)
        return renameat(olddirfd, oldpath, newdirfd, newpath);
    if (flags & CORRAL_RENAME_NOREPLACE)
        xflags |= RENAME_EXCL;
    if (flags & CORRAL_RENAME_EXCHANGE)
        xflags |= RENAME_SWAP;
    return renameatx_np(olddirfd, oldpath, newdirfd, newpath, xflags);
}

/* ------------------------------------------------------------------ other */
#else

static const int CORRAL_O_RESOLVE_BENEATH = 0;
static const int CORRAL_O_NOFOLLOW_ANY = 0;
static const int CORRAL_HAS_OPENAT2 = 0;
static const int CORRAL_HAS_RENAME_FLAGS = 0;

static int corral_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode,
                          uint64_t resolve)
{
    (void)dirfd; (void)path; (void)flags; (void)mode; (void)resolve;
    errno = ENOSYS;
    return -1;
}

static int corral_renameat(int olddirfd, const char *oldpath, int newdirfd,
                           const char *newpath, unsigned int flags)
{
    if (oldpath == NULL || newpath == NULL) {
        errno = EINVAL;
        return -1;
    }
    if (flags != 0) {
        errno = (flags & ~(unsigned int)CORRAL_KNOWN_RENAME_FLAGS) ? EINVAL : ENOSYS;
        return -1;
    }
    return renameat(olddirfd, oldpath, newdirfd, newpath);
}

#endif

/* -------------------------------------------------------- Root.open, fast */

/* openat2 beneath dirfd, EAGAIN (a rename raced a "..") retried a few times. */
static int corral_openat2_retried(int dirfd, const char *path, int flags, int mode,
                                  uint64_t resolve)
{
    int fd = -1, attempt;

    for (attempt = 0; attempt < 8; attempt++) {
        fd = corral_openat2(dirfd, path, (uint64_t)(unsigned int)flags, (uint64_t)mode, resolve);
        if (fd >= 0 || errno != EAGAIN)
            break;
    }
    return fd;
}

static int corral_open_beneath_stat(int dirfd, const char *path, size_t len, int flags,
                                    int mode, uint64_t resolve, struct stat *out);

/* Root.open's fast path as a METH_FASTCALL function of the module (no cffi
 * wrapper around it): open_text_beneath(dir_fd, path, flags, mode, resolve)
 * is corral_open_beneath with the path a str, whose UTF-8 bytes are read
 * where the str keeps them (none made for an ASCII path) and, for lone
 * surrogates, those os.fsencode gives.  The fd, or -1 for anything it does
 * not take (a path that is not a str, an argument C cannot hold, any
 * failure): the caller then resolves the slow way, which says why.  It is
 * exported by corral_export, only where the file system encoding
 * is UTF-8 (the caller checks), from the same cffi build: the C is in the
 * module cffi compiles, which includes Python.h first; a build without
 * Python (scripts/cross_compile.py's harness) has the export only, failing. */
#if defined(Py_PYTHON_H)
/* Both are in the stable ABI from Python 3.10 (corral's abi3 wheels are
 * cp311), but cffi's Py_LIMITED_API asks for 3.2's, which hides them. */
#ifndef METH_FASTCALL
#define METH_FASTCALL 0x0080
#endif
#if defined(Py_LIMITED_API) && Py_LIMITED_API + 0 < 0x030A0000
PyAPI_FUNC(const char *) PyUnicode_AsUTF8AndSize(PyObject *unicode, Py_ssize_t *size);
#endif

/* an int argument as C's int; 0 (and no Python error) where it is not one */
static int corral_int_arg(PyObject *value, int *out)
{
    long number = PyLong_AsLong(value);

    if ((number == -1 && PyErr_Occurred()) || number < INT32_MIN || number > INT32_MAX) {
        PyErr_Clear();
        return 0;
    }
    *out = (int)number;
    return 1;
}

/* The fast-path opens' part in common (open_text_beneath here,
 * open_stat_beneath in corral_read.h): their five arguments read and the
 * path opened beneath dir_fd with the GIL let go, *info the open's fstat;
 * the fd, or -1 for an argument it does not take or a failed open. */
static int corral_py_open_args_beneath(PyObject *const *args, Py_ssize_t nargs,
                                       struct stat *info)
{
    const char *path;
    Py_ssize_t size = 0;
    PyObject *encoded = NULL;
    PyThreadState *released;
    unsigned long long resolve;
    int dirfd, flags, mode, fd = -1;

    if (nargs != 5 || !PyUnicode_Check(args[1]) || !corral_int_arg(args[0], &dirfd) ||
        !corral_int_arg(args[2], &flags) || !corral_int_arg(args[3], &mode))
        return -1;
    resolve = PyLong_AsUnsignedLongLong(args[4]);
    if (resolve == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    path = PyUnicode_AsUTF8AndSize(args[1], &size);
    if (path == NULL) { /* lone surrogates: the bytes they stand for */
        PyErr_Clear();
        encoded = PyUnicode_EncodeFSDefault(args[1]);
        if (encoded == NULL) {
            PyErr_Clear();
            return -1;
        }
        path = PyBytes_AsString(encoded);
        size = PyBytes_Size(encoded);
    }
    if (path != NULL && size >= 0) {
        /* args[1] (or encoded) keeps the bytes alive while the GIL is out */
        released = PyEval_SaveThread();
        fd = corral_open_beneath_stat(dirfd, path, (size_t)size, flags, mode,
                                      (uint64_t)resolve, info);
        PyEval_RestoreThread(released);
    }
    Py_XDECREF(encoded);
    return fd;
}

static PyObject *corral_py_open_text_beneath(PyObject *self, PyObject *const *args,
                                             Py_ssize_t nargs)
{
    struct stat info;

    (void)self;
    return PyLong_FromLong(corral_py_open_args_beneath(args, nargs, &info));
}

static PyMethodDef corral_open_text_def = {
    "open_text_beneath", (PyCFunction)(void (*)(void))corral_py_open_text_beneath,
    METH_FASTCALL, "Root.open's fast path: (dir_fd, path: str, flags, mode, resolve) -> fd or -1"};

/* open_stat_beneath, defined in corral_read.h (joined after this file) and
 * exported by corral_export below: a tentative definition, completed there */
static PyMethodDef corral_open_stat_def;

#endif

/* Root.open's fast path in one call, so the Python around it is almost
 * nothing: refuse what the path checks refuse (a NUL inside, PATH_MAX bytes
 * or more; a mode beyond 0777), open beneath dirfd (O_CLOEXEC added, and
 * O_NONBLOCK|O_NOCTTY unless O_PATH, which openat2 takes only with a few
 * flags; the mode only with O_CREAT/O_TMPFILE), then fstat the fd and refuse
 * a FIFO, socket or device (unless O_PATH) and a removed directory.
 *
 * A single plain name (no "/", not "." or "..") cannot climb out: it is
 * opened first with openat and O_NOFOLLOW, the very call the walk makes for
 * it, which saves openat2's RESOLVE_BENEATH bookkeeping; if a symlink is there
 * and the caller follows links, openat2 opens it again, beneath.
 *
 * A path of several plain names is not opened so (nor with RESOLVE_NO_SYMLINKS
 * and no RESOLVE_BENEATH, about 180 ns less a call): no "..", no link and a
 * relative path do keep each lookup in the directory the one before reached,
 * but not beneath dirfd.  A directory renamed out of the root mid-walk takes
 * the rest of the walk with it, and its subtree may by then hold what was
 * never inside (rename a out, exchange a/.../b with an outside directory,
 * exchange back, rename a back: a file that was never beneath the root is
 * opened, 88 times in 10 s on Linux 6.18).  RESOLVE_BENEATH's last check
 * (the result still beneath dirfd when the walk ends, EXDEV otherwise)
 * refuses every one; a single name needs none, as it is looked up in dirfd
 * itself.
 *
 * Returns the fd, or -1: the caller then resolves the slow way, which says
 * precisely why (which component, which kind of escape).  No security
 * decision is made here: RESOLVE_BENEATH is the kernel's, and the rest only
 * says "not this way". */
static int corral_open_beneath_stat(int dirfd, const char *path, size_t len, int flags,
                                    int mode, uint64_t resolve, struct stat *out);

static int corral_open_beneath(int dirfd, const char *path, size_t len, int flags, int mode,
                               uint64_t resolve)
{
    struct stat info;

    return corral_open_beneath_stat(dirfd, path, len, flags, mode, resolve, &info);
}

/* corral_open_beneath, and *out gets the fstat its file-type check took
 * (what the fd is, as opened: a caller deciding on it needs no second
 * fstat); *out is undefined when -1 is returned. */
static int corral_open_beneath_stat(int dirfd, const char *path, size_t len, int flags,
                                    int mode, uint64_t resolve, struct stat *out)
{
    struct stat info;
    int fd = -1, kind, o_path = 0, saved, follows, one_name;

    if (path == NULL || len >= 4096 || strnlen(path, len + 1) != len || mode < 0 ||
        (mode & ~0777) || !corral_open_args_ok(flags, mode)) {
        errno = EINVAL;
        return -1;
    }
#if defined(O_PATH)
    o_path = (flags & O_PATH) != 0;
#endif
    flags |= O_CLOEXEC;
    if (!o_path)
        flags |= O_NONBLOCK | O_NOCTTY;
#if defined(O_TMPFILE)
    if (!(flags & O_CREAT) && (flags & O_TMPFILE) != O_TMPFILE)
        mode = 0;
#else
    if (!(flags & O_CREAT))
        mode = 0;
#endif
    follows = !(flags & O_NOFOLLOW);
    one_name = len > 0 && strchr(path, '/') == NULL && strcmp(path, ".") != 0 &&
               strcmp(path, "..") != 0;
    if (one_name) {
        fd = openat(dirfd, path, flags | O_NOFOLLOW, (mode_t)mode);
        if (fd < 0 && !(errno == ELOOP && follows))
            return -1;
        if (fd >= 0 && follows && o_path && fstat(fd, &info) == 0 && S_ISLNK(info.st_mode)) {
            close(fd); /* O_PATH|O_NOFOLLOW gave the link itself: follow it beneath */
            fd = -1;
        }
    }
    if (fd < 0)
        fd = corral_openat2_retried(dirfd, path, flags, mode, resolve);
    if (fd < 0)
        return -1;
    if (fstat(fd, out) != 0)
        goto refuse;
    kind = out->st_mode & S_IFMT;
    if (kind == S_IFREG)
        return fd;
    if (kind == S_IFDIR) {
        if (out->st_nlink == 0)
            goto refuse; /* a removed directory: only the root can be reached so */
        return fd;
    }
    if (!o_path && (kind == S_IFIFO || kind == S_IFSOCK || kind == S_IFCHR || kind == S_IFBLK))
        goto refuse;
    return fd;
refuse:
    saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

/* Whether the file open at fd still has the size and the modification and
 * change times (in ns, as os.stat_result's st_mtime_ns and st_ctime_ns) an
 * earlier fstat gave: 1 if so, 0 if any moved, -1 (errno set) when fstat
 * fails.  One call and no os.stat_result built, for a reader that only
 * asks whether the stamps it trusted still hold. */
static int corral_stamps_held(int fd, int64_t size, int64_t mtime_ns, int64_t ctime_ns)
{
    struct stat info;
    int64_t mtime, ctime;

    if (fstat(fd, &info) != 0)
        return -1;
#if defined(__APPLE__)
    mtime = (int64_t)info.st_mtimespec.tv_sec * 1000000000 + info.st_mtimespec.tv_nsec;
    ctime = (int64_t)info.st_ctimespec.tv_sec * 1000000000 + info.st_ctimespec.tv_nsec;
#else
    mtime = (int64_t)info.st_mtim.tv_sec * 1000000000 + info.st_mtim.tv_nsec;
    ctime = (int64_t)info.st_ctim.tv_sec * 1000000000 + info.st_ctim.tv_nsec;
#endif
    return (int64_t)info.st_size == size && mtime == mtime_ns && ctime == ctime_ns;
}

/* The walk's containment check (contained/_resolve.py, still_beneath) in
 * one call: the kernel's name of fd, read as the entry named by its number
 * in proc_fd (this process's /proc/self/fd, held open), then the root's,
 * and whether the first is the second or below it.  1 beneath, 0 not, -1
 * (errno set) when a name cannot be had (a look refused, a name of
 * PATH_MAX bytes or more: ENAMETOOLONG; ENOSYS off Linux). */
static int corral_fd_beneath(int proc_fd, int root_fd, int fd)
{
#if defined(__linux__)
    char number[24], mine[4096], root[4096];
    ssize_t mine_len, root_len;

    snprintf(number, sizeof number, "%d", fd);
    mine_len = readlinkat(proc_fd, number, mine, sizeof mine);
    if (mine_len < 0)
        return -1;
    snprintf(number, sizeof number, "%d", root_fd);
    root_len = readlinkat(proc_fd, number, root, sizeof root);
    if (root_len < 0)
        return -1;
    if (mine_len >= (ssize_t)sizeof mine || root_len >= (ssize_t)sizeof root) {
        errno = ENAMETOOLONG;  /* cut short: nothing to compare */
        return -1;
    }
    if (mine_len < root_len || memcmp(mine, root, (size_t)root_len) != 0)
        return 0;
    if (mine_len == root_len)
        return 1;
    /* below the root: the next byte is a separator (the root "/" ends in one) */
    return root[root_len - 1] == '/' || mine[root_len] == '/';
#else
    (void)proc_fd; (void)root_fd; (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}

/* corral_replace_held (_native.cdef): a held file's atomic replace, its
 * extended attributes listed first, in one call.  No decision is made
 * here: contained/_replace.py decides that a file with none is replaced by
 * corral_replace_file (corral_replace.h, declared here: it comes later in
 * the module) and that one with some is not; this lists them into names
 * and, where there are none, makes that replace. */
static int corral_replace_file(int dirfd, const char *tmp, const char *name, const char *data,
                               size_t size, int flags, int mode, uint64_t uid, uint64_t gid,
                               uint64_t dev, uint64_t ino);

#if defined(__linux__)
#include <sys/xattr.h>
#endif

static int corral_replace_held(int dirfd, int source_fd, const char *tmp, const char *name,
                               const char *data, size_t size, int flags, int mode,
                               uint64_t uid, uint64_t gid, uint64_t dev, uint64_t ino,
                               char *names, size_t names_size, int64_t *listed)
{
    ssize_t got;

    if (listed == NULL || (names == NULL && names_size > 0)) {
        errno = EINVAL;
        return -1;
    }
#if defined(__linux__)
    got = flistxattr(source_fd, names, names_size);
#else
    (void)source_fd;
    errno = ENOTSUP;
    got = -1;
#endif
    if (got != 0) {
        *listed = got < 0 ? -(int64_t)errno : (int64_t)got;
        return 3;
    }
    *listed = 0;
    return corral_replace_file(dirfd, tmp, name, data, size, flags, mode, uid, gid, dev, ino);
}

/* corral_watch_read_replace (_native.cdef): one read of the kernel watch
 * and corral_watch_one_replace's look at it (corral_events.h, declared
 * here: it comes later in the module) in one call, so the common read, a
 * view's own replace, makes no bytes in Python. */
static int corral_watch_one_replace(const char *buf, int64_t len, int32_t wd,
                                    const char *arrival, int64_t alen);

static int corral_watch_read_replace(int fd, char *buf, size_t size, int32_t wd,
                                     const char *arrival, int64_t alen, int64_t *got)
{
    ssize_t done;

    if (buf == NULL || got == NULL || arrival == NULL || size > (size_t)INT64_MAX) {
        errno = EINVAL;
        return -1;
    }
    do
        done = read(fd, buf, size);
    while (done < 0 && errno == EINTR);
    if (done < 0)
        return -1;
    *got = (int64_t)done;
    return corral_watch_one_replace(buf, (int64_t)done, wd, arrival, alen);
}

/* corral_replace_held as a METH_FASTCALL function of the module (no cffi
 * wrapper around it, as open_text_beneath above): replace_held(dir_fd,
 * source_fd, tmp, name, data, flags, mode, owner, expect), owner and
 * expect pairs of ints, the names str (their UTF-8 where the str keeps
 * them; os.fsencode's bytes for lone surrogates), data bytes.  Its answer
 * as Backend.replace_held gives it: 0, 1 or 2; the names listed (a list
 * of str, as os.listxattr decodes them); minus the errno of a listing
 * that failed.  OSError for a failure (EINVAL: a NUL in a name),
 * TypeError for arguments C cannot hold.  Exported by
 * corral_export where the file system encoding is UTF-8 (the
 * caller checks). */
#if defined(Py_PYTHON_H)
/* a str argument's bytes in *text (*owner: a bytes object made for them,
 * or NULL); 0 with a Python error set where it has none to give */
static int corral_name_arg(PyObject *value, const char **text, PyObject **owner)
{
    Py_ssize_t size = 0;

    *owner = NULL;
    if (!PyUnicode_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "replace_held: a name is not a str");
        return 0;
    }
    *text = PyUnicode_AsUTF8AndSize(value, &size);
    if (*text == NULL) { /* lone surrogates: the bytes they stand for */
        PyErr_Clear();
        *owner = PyUnicode_EncodeFSDefault(value);
        if (*owner == NULL)
            return 0;
        *text = PyBytes_AsString(*owner);
        size = PyBytes_Size(*owner);
        if (*text == NULL || size < 0)
            return 0;
    }
    if (memchr(*text, '\0', (size_t)size) != NULL) {
        errno = EINVAL;
        PyErr_SetFromErrno(PyExc_OSError);
        return 0;
    }
    return 1;
}

/* an int pair's two ints as C's 64 bits (a negative one as its two's
 * complement, as Python's & (2**64 - 1)); 0 with a Python error set */
static int corral_pair_arg(PyObject *value, unsigned long long *first,
                           unsigned long long *second)
{
    if (!PyTuple_Check(value) || PyTuple_Size(value) != 2) {
        PyErr_SetString(PyExc_TypeError, "replace_held: owner and expect are pairs");
        return 0;
    }
    *first = PyLong_AsUnsignedLongLongMask(PyTuple_GetItem(value, 0));
    if (*first == (unsigned long long)-1 && PyErr_Occurred())
        return 0;
    *second = PyLong_AsUnsignedLongLongMask(PyTuple_GetItem(value, 1));
    return !(*second == (unsigned long long)-1 && PyErr_Occurred());
}

static PyObject *corral_py_replace_held(PyObject *self, PyObject *const *args,
                                        Py_ssize_t nargs)
{
    const char *tmp = NULL, *name = NULL, *data;
    PyObject *tmp_owner = NULL, *name_owner = NULL, *answer = NULL, *item;
    unsigned long long uid, gid, dev, ino;
    PyThreadState *released;
    char names[4096];
    int64_t listed = 0, at, end;
    Py_ssize_t size;
    int dirfd, source_fd, flags, mode, made, saved;

    (void)self;
    if (nargs != 9 || !corral_int_arg(args[0], &dirfd) || !corral_int_arg(args[1], &source_fd) ||
        !PyBytes_Check(args[4]) || !corral_int_arg(args[5], &flags) ||
        !corral_int_arg(args[6], &mode)) {
        PyErr_SetString(PyExc_TypeError, "replace_held(dir_fd, source_fd, tmp, name, data: "
                                         "bytes, flags, mode, owner, expect)");
        return NULL;
    }
    if (!corral_pair_arg(args[7], &uid, &gid) || !corral_pair_arg(args[8], &dev, &ino) ||
        !corral_name_arg(args[2], &tmp, &tmp_owner) ||
        !corral_name_arg(args[3], &name, &name_owner))
        goto done;
    data = PyBytes_AsString(args[4]);
    size = PyBytes_Size(args[4]);
    if (data == NULL || size < 0)
        goto done;
    /* args (and the owners) keep the bytes alive while the GIL is out */
    released = PyEval_SaveThread();
    made = corral_replace_held(dirfd, source_fd, tmp, name, data, (size_t)size, flags, mode,
                               uid, gid, dev, ino, names, sizeof names, &listed);
    saved = errno;
    PyEval_RestoreThread(released);
    if (made < 0) {
        errno = saved;
        PyErr_SetFromErrno(PyExc_OSError);
        goto done;
    }
    if (made != 3 || listed <= 0) {
        answer = PyLong_FromLongLong(made == 3 ? listed : made);
        goto done;
    }
    answer = PyList_New(0);
    for (at = 0; answer != NULL && at < listed; at = end + 1) {
        for (end = at; end < listed && names[end] != '\0'; end++)
            ;
        if (end >= listed)
            break;  /* (the kernel ends each name with a NUL) */
        item = PyUnicode_DecodeFSDefaultAndSize(names + at, (Py_ssize_t)(end - at));
        if (item == NULL || PyList_Append(answer, item) != 0) {
            Py_XDECREF(item);
            Py_CLEAR(answer);
            break;
        }
        Py_DECREF(item);
    }
done:
    Py_XDECREF(tmp_owner);
    Py_XDECREF(name_owner);
    return answer;
}

static PyMethodDef corral_replace_held_def = {
    "replace_held", (PyCFunction)(void (*)(void))corral_py_replace_held, METH_FASTCALL,
    "Backend.replace_held in one call (see corral_native.h)"};

#endif

/* corral_watch_read_replace as a METH_FASTCALL function of the module
 * (exported by corral_export): watch_read_replace(watch_fd,
 * size, wd, arrival) with size at most 4096 and arrival bytes; None where
 * the read is exactly that replace, else the bytes read; OSError for a
 * failed read, as os.read raises it (BlockingIOError: none waits). */
#if defined(Py_PYTHON_H)
static PyObject *corral_py_watch_read_replace(PyObject *self, PyObject *const *args,
                                              Py_ssize_t nargs)
{
    char buf[4096];
    const char *arrival;
    Py_ssize_t alen;
    PyThreadState *released;
    int64_t got = 0;
    int fd, size, wd, taken, saved;

    (void)self;
    if (nargs != 4 || !corral_int_arg(args[0], &fd) || !corral_int_arg(args[1], &size) ||
        !corral_int_arg(args[2], &wd) || !PyBytes_Check(args[3]) || size < 0 ||
        (size_t)size > sizeof buf) {
        PyErr_SetString(PyExc_TypeError, "watch_read_replace(watch_fd, size <= 4096, wd, "
                                         "arrival: bytes)");
        return NULL;
    }
    arrival = PyBytes_AsString(args[3]);
    alen = PyBytes_Size(args[3]);
    if (arrival == NULL || alen < 0)
        return NULL;
    released = PyEval_SaveThread();
    taken = corral_watch_read_replace(fd, buf, (size_t)size, wd, arrival, (int64_t)alen, &got);
    saved = errno;
    PyEval_RestoreThread(released);
    if (taken < 0) {
        errno = saved;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    if (taken)
        Py_RETURN_NONE;
    return PyBytes_FromStringAndSize(buf, (Py_ssize_t)got);
}

static PyMethodDef corral_watch_read_replace_def = {
    "watch_read_replace", (PyCFunction)(void (*)(void))corral_py_watch_read_replace,
    METH_FASTCALL, "Backend.watch_read_replace in one call (see corral_native.h)"};

#endif

/* corral_export (_native.cdef): set the module's METH_FASTCALL function
 * named `function` (open_text_beneath, replace_held, watch_read_replace:
 * each wrapped by no cffi code) as an attribute of the module named
 * `module_name`; 0, or -1 with errno (EINVAL: no such function or the
 * module would not take it; ENOSYS: built without Python's headers). */
#if defined(Py_PYTHON_H)
static int corral_export(const char *module_name, const char *function)
{
    static PyMethodDef *const defs[] = {&corral_open_text_def, &corral_replace_held_def,
                                        &corral_watch_read_replace_def,
                                        &corral_open_stat_def};
    PyMethodDef *def = NULL;
    PyGILState_STATE gil;
    PyObject *module, *made = NULL;
    size_t at;
    int done = -1;

    if (module_name == NULL || function == NULL) {
        errno = EINVAL;
        return -1;
    }
    for (at = 0; at < sizeof defs / sizeof defs[0]; at++)
        if (strcmp(defs[at]->ml_name, function) == 0)
            def = defs[at];
    if (def == NULL) {
        errno = EINVAL;
        return -1;
    }
    gil = PyGILState_Ensure(); /* cffi let the GIL go around this call */
    module = PyImport_ImportModule(module_name);
    if (module != NULL)
        made = PyCFunction_NewEx(def, NULL, NULL);
    if (made != NULL && PyObject_SetAttrString(module, function, made) == 0)
        done = 0;
    if (done != 0)
        PyErr_Clear();
    Py_XDECREF(made);
    Py_XDECREF(module);
    PyGILState_Release(gil);
    if (done != 0)
        errno = EINVAL;
    return done;
}
#else
static int corral_export(const char *module_name, const char *function)
{
    (void)module_name;
    (void)function;
    errno = ENOSYS;
    return -1;
}
#endif
