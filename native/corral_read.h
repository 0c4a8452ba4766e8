/* corral._native: read_file's numbered window of a small file
 * (native/read.cdef declares it).
 *
 * read_file holds the whole file in memory; Python would decode it, split
 * it into a list of lines, slice the window, join "N\t" prefixes to it and
 * measure the result against the byte budget.  corral_text_window does the
 * same in one forward pass over the bytes (memchr per line) and one copy of
 * the window, for the common case only: anything it does not render the
 * way Python does (a byte order mark, any '\r', a line that may need
 * cutting) makes it return -1 and the Python path runs.  No allocation:
 * the caller passes the output buffer.  cffi releases the GIL around it.
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The decimal digits of n (> 0) written at out; their number. */
static int64_t corral_put_decimal(char *out, int64_t n)
{
    char digits[24];
    int64_t count = 0;
    while (n > 0) {
        digits[count++] = (char)('0' + n % 10);
        n /= 10;
    }
    for (int64_t i = 0; i < count; i++)
        out[i] = digits[count - 1 - i];
    return count;
}

/* The decimal number of digits digits at out plus one, written there; its
 * digits. */
static int64_t corral_next_decimal(char *out, int64_t digits)
{
    for (int64_t i = digits - 1; i >= 0; i--) {
        if (out[i] != '9') {
            out[i]++;
            return digits;
        }
        out[i] = '0';
    }
    /* all nines: one digit more, 1 followed by zeros */
    out[0] = '1';
    out[digits] = '0';
    return digits + 1;
}

/* The number of '\n' in [p, end). */
static int64_t corral_count_lf(const char *p, const char *end)
{
    int64_t count = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            break;
        count++;
        p = nl + 1;
    }
    return count;
}

#define CORRAL_WINDOW_INVALID (-2)

/* The counts below look at 16 bytes at once where SSE2 is (every x86-64):
 * byte compares give 0 or -1 per byte, subtracted into byte sums at most
 * 255 times, then added up (psadbw); elsewhere, and for the last bytes, a
 * byte at a time. */

/* Whether c is a control character text does not hold: C0 other than
 * \b \t \n \v \f \r (8 to 13) and ESC, and DEL. */
static int corral_is_control(unsigned char c)
{
    return ((c < 32) & ((unsigned char)(c - 8) > 5) & (c != 27)) | (c == 127);
}

/* Whether a JSON string holds c neither as it is nor as \n, \t, \" or \\:
 * anything but printable ASCII, tab and line feed. */
static int corral_is_unusual(unsigned char c)
{
    return ((c < 32) & (c != 9) & (c != 10)) | (c > 126);
}

#if defined(__SSE2__)
/* The 0/-1 byte sums of sum, added up. */
static int64_t corral_byte_sums(__m128i sum)
{
    __m128i sums = _mm_sad_epu8(_mm_sub_epi8(_mm_setzero_si128(), sum), _mm_setzero_si128());
    return (int64_t)_mm_cvtsi128_si32(sums) + _mm_extract_epi16(sums, 4);
}
#endif

/* The bytes of [p, p+n) that are corral_is_control. */
static int64_t corral_count_controls(const unsigned char *p, int64_t n)
{
    int64_t count = 0;
#if defined(__SSE2__)
    const __m128i space = _mm_set1_epi8(32), seven = _mm_set1_epi8(7),
                  fourteen = _mm_set1_epi8(14), esc = _mm_set1_epi8(27),
                  del = _mm_set1_epi8(127), none = _mm_set1_epi8(-1);
    while (n >= 16) {
        int64_t blocks = n / 16 < 255 ? n / 16 : 255;
        __m128i sum = _mm_setzero_si128();
        for (int64_t i = 0; i < blocks; i++, p += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)p);
            /* signed compares: 0 to 31 is below 32 and above -1 */
            __m128i c0 = _mm_and_si128(_mm_cmplt_epi8(x, space), _mm_cmpgt_epi8(x, none));
            __m128i kept = _mm_or_si128(_mm_and_si128(_mm_cmpgt_epi8(x, seven),
                                                      _mm_cmplt_epi8(x, fourteen)),
                                        _mm_cmpeq_epi8(x, esc));
            sum = _mm_add_epi8(sum, _mm_or_si128(_mm_andnot_si128(kept, c0),
                                                 _mm_cmpeq_epi8(x, del)));
        }
        count += corral_byte_sums(sum);
        n -= blocks * 16;
    }
#endif
    for (; n > 0; n--, p++)
        count += corral_is_control(*p);
    return count;
}

/* The bytes of [p, p+n) that are corral_is_unusual. */
static int64_t corral_count_unusual(const unsigned char *p, int64_t n)
{
    int64_t count = 0;
#if defined(__SSE2__)
    const __m128i space = _mm_set1_epi8(32), tab = _mm_set1_epi8(9), lf = _mm_set1_epi8(10),
                  del = _mm_set1_epi8(127);
    while (n >= 16) {
        int64_t blocks = n / 16 < 255 ? n / 16 : 255;
        __m128i sum = _mm_setzero_si128();
        for (int64_t i = 0; i < blocks; i++, p += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)p);
            /* signed: a byte of 128 or more is negative, so below 32 too */
            __m128i low = _mm_cmplt_epi8(x, space);
            __m128i kept = _mm_or_si128(_mm_cmpeq_epi8(x, tab), _mm_cmpeq_epi8(x, lf));
            sum = _mm_add_epi8(sum, _mm_or_si128(_mm_andnot_si128(kept, low),
                                                 _mm_cmpeq_epi8(x, del)));
        }
        count += corral_byte_sums(sum);
        n -= blocks * 16;
    }
#endif
    for (; n > 0; n--, p++)
        count += corral_is_unusual(*p);
    return count;
}

int64_t corral_text_window_rows(const char *buf, int64_t len, int64_t offset, int64_t limit,
                                int64_t cap, int64_t budget, int64_t head, char *out,
                                int64_t out_size, int64_t *facts, int64_t *starts,
                                int64_t starts_size)
{
    /* the arguments first, before any arithmetic on them */
    if (len < 0 || offset < 1 || limit < 0 || cap < 0 || budget < 0 || head < 0 ||
        out_size < 0 || facts == NULL || (buf == NULL && len > 0) ||
        (out == NULL && out_size > 0) || starts_size < 0 ||
        (starts == NULL && starts_size > 0)) {
        errno = EINVAL;
        return CORRAL_WINDOW_INVALID;
    }
    const char *p = buf, *end = len > 0 ? buf + len : buf;
    /* the window's end, clamped: a window past every line shows none */
    int64_t line = 1, used = 0, shown = 0;
    const char *first = NULL, *last_end = NULL; /* the bytes of the lines written */
    int64_t stop = limit > INT64_MAX - offset ? INT64_MAX : offset + limit;
    if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
        return -1;
    if (len > 0 && memchr(buf, '\r', (size_t)len) != NULL)
        return -1;
    facts[2] = len > 0 && memchr(buf, '\n', (size_t)len) != NULL;
    /* the number of the line being written, in decimal: the window's lines
     * are numbered on, so each number is the last one plus one */
    char number[24];
    int64_t digits = 0;
    while (p < end && line < stop) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl != NULL ? nl : end;
        if (line >= offset) {
            int64_t text = line_end - p;
            if (digits == 0)
                digits = corral_put_decimal(number, line);
            else
                digits = corral_next_decimal(number, digits);
            int64_t need = used + (shown ? 1 : 0) + digits + 1 + text;
            if (text > cap)
                return -1; /* Python cuts it (or finds it short in characters) */
            if (need > budget && shown > 0) {
                stop = line; /* over the budget: the lines before it are shown */
                break;
            }
            if (need > out_size || (starts != NULL && shown >= starts_size))
                return -1;
            if (starts != NULL)
                starts[shown] = p - buf;
            if (first == NULL)
                first = p;
            last_end = line_end;
            if (shown)
                out[used++] = '\n';
            memcpy(out + used, number, (size_t)digits);
            used += digits;
            out[used++] = '\t';
            memcpy(out + used, p, (size_t)text);
            used += text;
            shown++;
        }
        line++;
        p = nl != NULL ? nl + 1 : end;
    }
    /* the lines after the window are only counted */
    line += corral_count_lf(p, end);
    if (p < end && end[-1] != '\n')
        line++; /* an unterminated last line */
    facts[0] = line - 1;
    facts[1] = shown;
    int64_t unusual = first != NULL ? corral_count_unusual((const unsigned char *)first,
                                                           last_end - first) : 0;
    facts[4] = unusual;
    /* Every control byte is unusual: when the lines written begin the
     * buffer and hold none, only the head's bytes after them are looked at. */
    const char *head_end = head < len ? buf + head : end;
    const char *from = first == buf && unusual == 0 ? last_end : buf;
    facts[3] = from < head_end ? corral_count_controls((const unsigned char *)from,
                                                       head_end - from) : 0;
    return used;
}

int64_t corral_text_window_starts(const char *buf, int64_t len, int64_t offset, int64_t limit,
                                  int64_t cap, int64_t budget, int64_t head, char *out,
                                  int64_t out_size, int64_t *facts, int64_t *starts,
                                  int64_t starts_size)
{
    int64_t five[5];
    if (facts == NULL) {
        errno = EINVAL;
        return CORRAL_WINDOW_INVALID;
    }
    int64_t written = corral_text_window_rows(buf, len, offset, limit, cap, budget, head, out,
                                              out_size, five, starts, starts_size);
    if (written >= 0)
        memcpy(facts, five, 4 * sizeof(int64_t));
    return written;
}

int64_t corral_text_window_head(const char *buf, int64_t len, int64_t offset, int64_t limit,
                                int64_t cap, int64_t budget, int64_t head, char *out,
                                int64_t out_size, int64_t *facts)
{
    return corral_text_window_starts(buf, len, offset, limit, cap, budget, head, out, out_size,
                                     facts, NULL, 0);
}

int64_t corral_text_window(const char *buf, int64_t len, int64_t offset, int64_t limit,
                           int64_t cap, int64_t budget, char *out, int64_t out_size,
                           int64_t *facts)
{
    int64_t four[4];
    if (facts == NULL) {
        errno = EINVAL;
        return CORRAL_WINDOW_INVALID;
    }
    int64_t written = corral_text_window_head(buf, len, offset, limit, cap, budget, 0, out,
                                              out_size, four);
    if (written >= 0)
        memcpy(facts, four, 3 * sizeof(int64_t));
    return written;
}

/* corral_find_from (read.cdef): bytes.find(needle, start) of buf[0:len],
 * by memmem, which skips where bytes.find steps a byte at a time (three to
 * thirteen times faster on source text): an edit's text looked for in a
 * file's bytes.  memmem is declared because _GNU_SOURCE is defined before
 * any header (corral_native.h, and the build's -D_GNU_SOURCE). */
int64_t corral_find_from(const char *buf, int64_t len, const char *needle, int64_t nlen,
                         int64_t start)
{
    const char *found;
    if (buf == NULL || needle == NULL || len < 0 || nlen < 0 || start < 0) {
        errno = EINVAL;
        return -2;
    }
    if (start > len || nlen > len - start)
        return -1;
    if (nlen == 0)
        return start;
    found = memmem(buf + start, (size_t)(len - start), needle, (size_t)nlen);
    return found == NULL ? -1 : (int64_t)(found - buf);
}

/* open_stat_beneath(dir_fd, path: str, flags, mode, resolve): Root.open_handle's
 * fast path for a read, as the module's own METH_FASTCALL function (exported
 * by corral_export where the file system encoding is UTF-8, the caller
 * checks): open_text_beneath's arguments and open (corral_open_beneath, its
 * checks and its file-type check), answering (fd, os.stat_result) where
 * that answers the fd: the stat is the fstat the file-type check took, so a
 * reader deciding on what it opened (its type, links, size, stamps) takes
 * no second one.  -1 for anything it does not take, as open_text_beneath
 * (the caller resolves the slow way, which says why), and where no stat can
 * be made (the fd is then closed).
 *
 * The stat is os.fstat's, field for field, for os.stat_result's layout on
 * Linux (19 fields: the ten of the tuple, the three float times, the three
 * ns times, st_blksize, st_blocks, st_rdev), built as CPython's posixmodule
 * builds it; the caller exports it only where os.stat_result has that
 * layout, and here it is refused (-1) for a type of another size. */
#if defined(Py_PYTHON_H)
#define CORRAL_STAT_FIELDS 19

/* os.stat_result, looked up once (under the GIL); NULL where it is not
 * there or not of the 19 fields this file fills */
static PyTypeObject *corral_stat_type(void)
{
    static PyObject *type = NULL;
    static int looked = 0;
    PyObject *os, *found, *fields;
    long count = -1;

    if (looked)
        return (PyTypeObject *)type;
    looked = 1;
    os = PyImport_ImportModule("os");
    found = os == NULL ? NULL : PyObject_GetAttrString(os, "stat_result");
    Py_XDECREF(os);
    fields = found == NULL ? NULL : PyObject_GetAttrString(found, "n_fields");
    if (fields != NULL)
        count = PyLong_AsLong(fields);
    Py_XDECREF(fields);
    if (found != NULL && PyType_Check(found) && count == CORRAL_STAT_FIELDS)
        type = found; /* kept for the life of the process */
    else
        Py_XDECREF(found);
    PyErr_Clear();
    return (PyTypeObject *)type;
}

/* a time's three forms at index, index + 3 and index + 6 (int seconds,
 * float seconds, int nanoseconds), as posixmodule's fill_time makes them */
static int corral_stat_time(PyObject *result, int index, long long sec, long nsec)
{
    PyObject *whole = PyLong_FromLongLong(sec), *ns;
    PyObject *seconds = PyFloat_FromDouble((double)sec + (double)nsec * 1e-9);

    if (sec > -9000000000LL && sec < 9000000000LL) {
        ns = PyLong_FromLongLong(sec * 1000000000LL + nsec);
    } else { /* beyond int64 nanoseconds: Python's ints */
        PyObject *billion = PyLong_FromLong(1000000000L), *part = PyLong_FromLong(nsec);
        PyObject *scaled = whole == NULL || billion == NULL ? NULL
                                                            : PyNumber_Multiply(whole, billion);
        ns = scaled == NULL || part == NULL ? NULL : PyNumber_Add(scaled, part);
        Py_XDECREF(billion);
        Py_XDECREF(part);
        Py_XDECREF(scaled);
    }
    if (whole == NULL || seconds == NULL || ns == NULL) {
        Py_XDECREF(whole);
        Py_XDECREF(seconds);
        Py_XDECREF(ns);
        return 0;
    }
    PyStructSequence_SetItem(result, index, whole); /* (each steals its reference) */
    PyStructSequence_SetItem(result, index + 3, seconds);
    PyStructSequence_SetItem(result, index + 6, ns);
    return 1;
}

/* the id fields as posixmodule's _PyLong_FromUid/_PyLong_FromGid: -1 for
 * the "no id" value, else unsigned */
static PyObject *corral_stat_id(unsigned long id, int is_none)
{
    return is_none ? PyLong_FromLong(-1) : PyLong_FromUnsignedLong(id);
}

/* os.fstat's answer for info; NULL (a Python error set) where it cannot be made */
static PyObject *corral_stat_result(PyTypeObject *type, const struct stat *info)
{
    PyObject *result = PyStructSequence_New(type), *item;
    int at;
#if defined(__APPLE__)
    long long times[3] = {info->st_atimespec.tv_sec, info->st_mtimespec.tv_sec,
                          info->st_ctimespec.tv_sec};
    long nanos[3] = {info->st_atimespec.tv_nsec, info->st_mtimespec.tv_nsec,
                     info->st_ctimespec.tv_nsec};
#else
    long long times[3] = {info->st_atim.tv_sec, info->st_mtim.tv_sec, info->st_ctim.tv_sec};
    long nanos[3] = {info->st_atim.tv_nsec, info->st_mtim.tv_nsec, info->st_ctim.tv_nsec};
#endif

    if (result == NULL)
        return NULL;
    for (at = 0; at < CORRAL_STAT_FIELDS; at++) {
        switch (at) {
        case 0: item = PyLong_FromLong((long)info->st_mode); break;
        case 1: item = PyLong_FromUnsignedLongLong((unsigned long long)info->st_ino); break;
        case 2: item = PyLong_FromLongLong((long long)info->st_dev); break;
        case 3: item = PyLong_FromUnsignedLong((unsigned long)info->st_nlink); break;
        case 4: item = corral_stat_id((unsigned long)info->st_uid,
                                      info->st_uid == (uid_t)-1); break;
        case 5: item = corral_stat_id((unsigned long)info->st_gid,
                                      info->st_gid == (gid_t)-1); break;
        case 6: item = PyLong_FromLongLong((long long)info->st_size); break;
        case 7: case 8: case 9:
            if (!corral_stat_time(result, at, times[at - 7], nanos[at - 7]))
                goto failed;
            continue;
        case 10: case 11: case 12: case 13: case 14: case 15:
            continue; /* set with 7, 8 and 9 */
        case 16: item = PyLong_FromLong((long)info->st_blksize); break;
        case 17: item = PyLong_FromLong((long)info->st_blocks); break;
        default: item = PyLong_FromLong((long)info->st_rdev); break;
        }
        if (item == NULL)
            goto failed;
        PyStructSequence_SetItem(result, at, item);
    }
    return result;
failed:
    Py_DECREF(result);
    return NULL;
}

static PyObject *corral_py_open_stat_beneath(PyObject *self, PyObject *const *args,
                                             Py_ssize_t nargs)
{
    PyObject *stat, *number, *pair;
    PyTypeObject *type;
    struct stat info;
    int fd;

    (void)self;
    type = corral_stat_type();
    if (type == NULL)
        return PyLong_FromLong(-1);
    fd = corral_py_open_args_beneath(args, nargs, &info);
    if (fd < 0)
        return PyLong_FromLong(-1);
    stat = corral_stat_result(type, &info);
    number = stat == NULL ? NULL : PyLong_FromLong(fd);
    pair = number == NULL ? NULL : PyTuple_New(2);
    if (pair == NULL) { /* no stat to give: no fd either, the slow way answers */
        PyErr_Clear();
        Py_XDECREF(stat);
        Py_XDECREF(number);
        close(fd);
        return PyLong_FromLong(-1);
    }
    PyTuple_SetItem(pair, 0, number); /* (each steals its reference) */
    PyTuple_SetItem(pair, 1, stat);
    return pair;
}

static PyMethodDef corral_open_stat_def = {
    "open_stat_beneath", (PyCFunction)(void (*)(void))corral_py_open_stat_beneath,
    METH_FASTCALL,
    "Root.open_handle's read: (dir_fd, path: str, flags, mode, resolve) -> (fd, stat) or -1"};
#endif
