/*
 * nexus_gateway._slb: the semantic lookaside buffer scan.
 *
 * score[i] = scale[i] * sum_j query[j] * matrix[i][j], with the sum in exact int32 arithmetic, so
 * every kernel (AVX-512 VNNI, AVX2, NEON, scalar) and the numpy fallback return identical scores and
 * therefore identical rankings. The kernel is chosen once at import from what the CPU supports
 * (set_kernel() lets tests force each one). Top-k keeps a k-sized min-heap instead of sorting the
 * whole array; ties go to the lower row index, as in the numpy fallback.
 *
 * Rows are `width` bytes apart, width a multiple of 64, and the matrix is 64-byte aligned (the
 * Python side guarantees both; unaligned loads are used anyway, so a misaligned buffer is slow,
 * never wrong).
 *
 * A large matrix is scanned by up to MAX_THREADS threads, each over its own contiguous rows with its own
 * heap, merged at the end. One core streams ~17 GB/s of rows here, two together ~31 (docs/routing.md),
 * so 100k tools take about 60% of the time. Selection is by a total order (score, then row), so the
 * result does not depend on how the rows were split. A thread costs tens of microseconds to start, so
 * each gets at least BYTES_PER_THREAD of rows: measured here, two threads beat one from ~4k tools of
 * 384 dimensions (1.5 MB) up; 1k tools take 21 µs alone and 47 µs on two.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define NEXUS_X86 1
#endif
#if defined(__aarch64__)
#include <arm_neon.h>
#define NEXUS_NEON 1
#endif

/* Score `rows` consecutive rows (row r at matrix + r * width) into out[r] = dot * scales[r]. A kernel
 * that can prefetches the rows `ahead` bytes past the ones it reads (0: none; see STREAM_BYTES). */
typedef void (*scan_fn)(const int8_t *matrix, Py_ssize_t width, Py_ssize_t rows, const int8_t *query,
                        const float *scales, float *out, Py_ssize_t ahead);

/* A matrix this large streams from memory rather than the last-level cache, and there the blocked
 * kernels gain from asking for their rows 8 ahead (~3 KB at 384 dimensions) before the hardware
 * prefetcher would: 60k tools (23 MB) 1.34x, 100k 1.11-1.32x, paired in one process (session 36).
 * Smaller matrices sit in cache and the prefetches only cost: 250 tools 3.7 -> 4.0 us, 10k 2-5%
 * slower, 30k (11.5 MB) either way. */
#define STREAM_BYTES ((Py_ssize_t)16 << 20)
#define AHEAD_ROWS 8
static int prefetch_enabled = 1; /* set_prefetch(False): the benchmark's side-by-side baseline */
static Py_ssize_t prefetch_ahead(Py_ssize_t matrix_bytes, Py_ssize_t width) {
    return prefetch_enabled && matrix_bytes >= STREAM_BYTES ? AHEAD_ROWS * width : 0;
}

static int32_t dot_serial(const int8_t *a, const int8_t *b, Py_ssize_t n) {
    int32_t sum = 0;
    for (Py_ssize_t i = 0; i < n; i++) sum += (int32_t)a[i] * (int32_t)b[i];
    return sum;
}

/* Row by row through a dot kernel: the serial and NEON paths, and any width the blocked kernels
 * below do not take (they need a multiple of 64). */
#define ROWWISE_SCAN(name, dot)                                                                        \
    static void name(const int8_t *matrix, Py_ssize_t width, Py_ssize_t rows, const int8_t *query,   \
                     const float *scales, float *out, Py_ssize_t ahead) {                             \
        (void)ahead;                                                                                   \
        for (Py_ssize_t r = 0; r < rows; r++) out[r] = (float)dot(matrix + r * width, query, width) * scales[r]; \
    }
ROWWISE_SCAN(scan_serial, dot_serial)

#ifdef NEXUS_X86
/* Ask for the rows `ahead` bytes on. The address is formed as an integer because it may lie past the
 * matrix's end, which a prefetch may name: x86 prefetches are hints and never fault. */
#define PREFETCH_ROWS(block, bytes, ahead)                                                              \
    for (Py_ssize_t p = 0; p < (bytes); p += 64) _mm_prefetch((const char *)((uintptr_t)(block) + (uintptr_t)((ahead) + p)), _MM_HINT_T0)
#define MAX_CHUNKS 32 /* 64-byte steps a blocked kernel keeps for the query: widths up to 2,048 */
/* maddubs multiplies unsigned by signed bytes: feed it |q| and the row carrying q's sign. Pairs of
 * products fit int16 because both sides are clipped to [-127, 127] (127 * 127 * 2 = 32258 < 32767).
 * The blocked scans below take |q| once per scan and reduce four rows' sums together: per-row query
 * work and reductions, not the multiplies, were much of the time at 384 dimensions. The AVX2 scan reads
 * rows one after another (its chain per row is a 1-cycle add); the VNNI scan interleaves four rows,
 * because its chain per row is dpbusd's latency at every 64-byte step (session 19: 250 rows 6.7 -> 4.5
 * us, 100k rows no slower; session 10's machine had found four streams 1.5x slower at 100k). */
__attribute__((target("avx2"))) static int32_t dot_avx2(const int8_t *a, const int8_t *b, Py_ssize_t n) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc = _mm256_setzero_si256();
    Py_ssize_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i va = _mm256_loadu_si256((const __m256i *)(a + i));
        __m256i vb = _mm256_loadu_si256((const __m256i *)(b + i));
        __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(va, va), _mm256_sign_epi8(vb, va));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, ones));
    }
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    s = _mm_hadd_epi32(s, s);
    s = _mm_hadd_epi32(s, s);
    int32_t sum = _mm_cvtsi128_si32(s);
    for (; i < n; i++) sum += (int32_t)a[i] * (int32_t)b[i];
    return sum;
}
ROWWISE_SCAN(scan_avx2_rowwise, dot_avx2)

/* The blocked AVX2 scan, width / 32 steps a row. Inlined where the width is a constant, the
 * compiler unrolls the step loop and keeps the query in registers: at 384 dimensions (bge-small's) that
 * scanned 248 rows in 2.0 us against 3.9 us with the count read at run time, the same code otherwise
 * (session 58, a standalone C timing on an AVX2-only EPYC). */
__attribute__((target("avx2"), always_inline)) static inline void scan_avx2_blocked(
    const int8_t *matrix, Py_ssize_t width, Py_ssize_t rows, const int8_t *query, const float *scales, float *out,
    Py_ssize_t ahead) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i qs[2 * MAX_CHUNKS], qa[2 * MAX_CHUNKS];
    const Py_ssize_t chunks = width / 32;
    for (Py_ssize_t c = 0; c < chunks; c++) {
        qs[c] = _mm256_loadu_si256((const __m256i *)(query + 32 * c));
        qa[c] = _mm256_sign_epi8(qs[c], qs[c]);
    }
    Py_ssize_t r = 0;
    for (; r + 4 <= rows; r += 4) {
        if (ahead) PREFETCH_ROWS(matrix + r * width, 4 * width, ahead);
        __m256i acc[4];
        for (int j = 0; j < 4; j++) {
            const int8_t *row = matrix + (r + j) * width;
            __m256i a = _mm256_setzero_si256();
            for (Py_ssize_t c = 0; c < chunks; c++) {
                __m256i v = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)(row + 32 * c)), qs[c]);
                a = _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_maddubs_epi16(qa[c], v), ones));
            }
            acc[j] = a;
        }
        /* four 8-lane sums -> one vector of four */
        __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(acc[0], acc[1]), _mm256_hadd_epi32(acc[2], acc[3]));
        __m128i t = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        _mm_storeu_ps(out + r, _mm_mul_ps(_mm_cvtepi32_ps(t), _mm_loadu_ps(scales + r)));
    }
    scan_avx2_rowwise(matrix + r * width, width, rows - r, query, scales + r, out + r, 0);
}

__attribute__((target("avx2"))) static void scan_avx2(const int8_t *matrix, Py_ssize_t width, Py_ssize_t rows,
                                                      const int8_t *query, const float *scales, float *out,
                                                      Py_ssize_t ahead) {
    if (width % 32 != 0 || width > 64 * MAX_CHUNKS) { scan_avx2_rowwise(matrix, width, rows, query, scales, out, 0); return; }
    /* the default embedder's width as a constant: the one call the compiler unrolls */
    if (width == 384) scan_avx2_blocked(matrix, 384, rows, query, scales, out, ahead);
    else scan_avx2_blocked(matrix, width, rows, query, scales, out, ahead);
}

/* VNNI: dpbusd multiplies unsigned by signed bytes into int32 (no int16 saturation). Feed it |q| and
 * the row negated where q < 0, 64 bytes per step. */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static int32_t dot_vnni(const int8_t *a, const int8_t *b,
                                                                               Py_ssize_t n) {
    const __m512i zero = _mm512_setzero_si512();
    __m512i acc = zero;
    Py_ssize_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512i va = _mm512_loadu_si512((const void *)(a + i));
        __m512i vb = _mm512_loadu_si512((const void *)(b + i));
        __mmask64 negative = _mm512_movepi8_mask(va);
        acc = _mm512_dpbusd_epi32(acc, _mm512_abs_epi8(va), _mm512_mask_sub_epi8(vb, negative, zero, vb));
    }
    int32_t sum = _mm512_reduce_add_epi32(acc);
    for (; i < n; i++) sum += (int32_t)a[i] * (int32_t)b[i];
    return sum;
}
ROWWISE_SCAN(scan_vnni_rowwise, dot_vnni)

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void scan_vnni(const int8_t *matrix, Py_ssize_t width,
                                                                            Py_ssize_t rows, const int8_t *query,
                                                                            const float *scales, float *out,
                                                                            Py_ssize_t ahead) {
    if (width % 64 != 0 || width > 64 * MAX_CHUNKS) { scan_vnni_rowwise(matrix, width, rows, query, scales, out, 0); return; }
    const __m512i zero = _mm512_setzero_si512();
    /* |q| and q's sign mask once per scan, not once per row */
    __m512i qa[MAX_CHUNKS];
    __mmask64 negative[MAX_CHUNKS];
    Py_ssize_t chunks = width / 64;
    for (Py_ssize_t c = 0; c < chunks; c++) {
        __m512i q = _mm512_loadu_si512((const void *)(query + 64 * c));
        qa[c] = _mm512_abs_epi8(q);
        negative[c] = _mm512_movepi8_mask(q);
    }
    /* four rows at a time, their chunks interleaved: four independent dpbusd chains. One row's chain
     * alone waits on dpbusd's latency at every chunk (six chained steps at 384 dimensions). */
    Py_ssize_t r = 0;
    for (; r + 4 <= rows; r += 4) {
        const int8_t *row = matrix + r * width;
        if (ahead) PREFETCH_ROWS(row, 4 * width, ahead);
        __m512i a0 = zero, a1 = zero, a2 = zero, a3 = zero;
        for (Py_ssize_t c = 0; c < chunks; c++) {
            __m512i v0 = _mm512_loadu_si512((const void *)(row + 64 * c));
            __m512i v1 = _mm512_loadu_si512((const void *)(row + width + 64 * c));
            __m512i v2 = _mm512_loadu_si512((const void *)(row + 2 * width + 64 * c));
            __m512i v3 = _mm512_loadu_si512((const void *)(row + 3 * width + 64 * c));
            a0 = _mm512_dpbusd_epi32(a0, qa[c], _mm512_mask_sub_epi8(v0, negative[c], zero, v0));
            a1 = _mm512_dpbusd_epi32(a1, qa[c], _mm512_mask_sub_epi8(v1, negative[c], zero, v1));
            a2 = _mm512_dpbusd_epi32(a2, qa[c], _mm512_mask_sub_epi8(v2, negative[c], zero, v2));
            a3 = _mm512_dpbusd_epi32(a3, qa[c], _mm512_mask_sub_epi8(v3, negative[c], zero, v3));
        }
        /* four 16-lane sums -> one vector of four: interleave pairs, add, then fold the 128-bit lanes */
        __m512i x01 = _mm512_add_epi32(_mm512_unpacklo_epi32(a0, a1), _mm512_unpackhi_epi32(a0, a1));
        __m512i x23 = _mm512_add_epi32(_mm512_unpacklo_epi32(a2, a3), _mm512_unpackhi_epi32(a2, a3));
        __m512i y = _mm512_add_epi32(_mm512_unpacklo_epi64(x01, x23), _mm512_unpackhi_epi64(x01, x23));
        __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(y), _mm512_extracti64x4_epi64(y, 1));
        __m128i t = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
        _mm_storeu_ps(out + r, _mm_mul_ps(_mm_cvtepi32_ps(t), _mm_loadu_ps(scales + r)));
    }
    scan_vnni_rowwise(matrix + r * width, width, rows - r, query, scales + r, out + r, 0);
}
#endif

#ifdef NEXUS_NEON
static int32_t dot_neon(const int8_t *a, const int8_t *b, Py_ssize_t n) {
    int32x4_t acc = vdupq_n_s32(0);
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16) {
        int8x16_t va = vld1q_s8(a + i), vb = vld1q_s8(b + i);
        int16x8_t lo = vmull_s8(vget_low_s8(va), vget_low_s8(vb));
        int16x8_t hi = vmull_s8(vget_high_s8(va), vget_high_s8(vb));
        acc = vpadalq_s16(acc, lo);
        acc = vpadalq_s16(acc, hi);
    }
    int32_t sum = vaddvq_s32(acc);
    for (; i < n; i++) sum += (int32_t)a[i] * (int32_t)b[i];
    return sum;
}
ROWWISE_SCAN(scan_neon, dot_neon)
#endif

static scan_fn current_scan = scan_serial;
static const char *current_name = "serial";

static int kernel_available(const char *name) {
    if (strcmp(name, "serial") == 0) return 1;
#ifdef NEXUS_X86
    __builtin_cpu_init();
    if (strcmp(name, "avx2") == 0) return __builtin_cpu_supports("avx2");
    if (strcmp(name, "vnni") == 0)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vnni");
#endif
#ifdef NEXUS_NEON
    if (strcmp(name, "neon") == 0) return 1;
#endif
    return 0;
}

static int use_kernel(const char *name) {
    if (!kernel_available(name)) return 0;
    if (strcmp(name, "serial") == 0) { current_scan = scan_serial; current_name = "serial"; return 1; }
#ifdef NEXUS_X86
    if (strcmp(name, "avx2") == 0) { current_scan = scan_avx2; current_name = "avx2"; return 1; }
    if (strcmp(name, "vnni") == 0) { current_scan = scan_vnni; current_name = "vnni"; return 1; }
#endif
#ifdef NEXUS_NEON
    if (strcmp(name, "neon") == 0) { current_scan = scan_neon; current_name = "neon"; return 1; }
#endif
    return 0;
}

/* Validate (matrix, scales, query) buffers; on success fills rows/width. */
static int check_inputs(Py_buffer *m, Py_buffer *s, Py_buffer *q, Py_ssize_t *rows, Py_ssize_t *width) {
    if (q->len <= 0) { PyErr_SetString(PyExc_ValueError, "query is empty"); return 0; }
    *width = q->len;
    if (m->len % *width != 0) { PyErr_SetString(PyExc_ValueError, "matrix size is not a multiple of the query width"); return 0; }
    *rows = m->len / *width;
    if (s->len != *rows * (Py_ssize_t)sizeof(float)) { PyErr_SetString(PyExc_ValueError, "scales must hold one float32 per row"); return 0; }
    return 1;
}

static PyObject *py_scan(PyObject *self, PyObject *args) {
    Py_buffer m, s, q;
    if (!PyArg_ParseTuple(args, "y*y*y*", &m, &s, &q)) return NULL;
    Py_ssize_t rows, width;
    PyObject *out = NULL;
    if (check_inputs(&m, &s, &q, &rows, &width)) {
        out = PyByteArray_FromStringAndSize(NULL, rows * (Py_ssize_t)sizeof(float));
        if (out) {
            float *scores = (float *)PyByteArray_AS_STRING(out);
            const int8_t *matrix = (const int8_t *)m.buf, *query = (const int8_t *)q.buf;
            const float *scales = (const float *)s.buf;
            int release = m.len >= (1 << 16);
            PyThreadState *state = release ? PyEval_SaveThread() : NULL;
            current_scan(matrix, width, rows, query, scales, scores, prefetch_ahead(m.len, width));
            if (release) PyEval_RestoreThread(state);
        }
    }
    PyBuffer_Release(&m); PyBuffer_Release(&s); PyBuffer_Release(&q);
    return out;
}

#define SCAN_BLOCK 256

/* min-heap on (score, -index): the root is the worst of the kept k. */
static int worse(float sa, Py_ssize_t ia, float sb, Py_ssize_t ib) { return sa < sb || (sa == sb && ia > ib); }

static void sift_down(float *hs, Py_ssize_t *hi, Py_ssize_t n, Py_ssize_t pos) {
    for (;;) {
        Py_ssize_t l = 2 * pos + 1, r = l + 1, w = pos;
        if (l < n && worse(hs[l], hi[l], hs[w], hi[w])) w = l;
        if (r < n && worse(hs[r], hi[r], hs[w], hi[w])) w = r;
        if (w == pos) return;
        float ts = hs[pos]; hs[pos] = hs[w]; hs[w] = ts;
        Py_ssize_t ti = hi[pos]; hi[pos] = hi[w]; hi[w] = ti;
        pos = w;
    }
}

static void sift_up(float *hs, Py_ssize_t *hi, Py_ssize_t pos) {
    while (pos > 0) {
        Py_ssize_t parent = (pos - 1) / 2;
        if (!worse(hs[pos], hi[pos], hs[parent], hi[parent])) return;
        float ts = hs[pos]; hs[pos] = hs[parent]; hs[parent] = ts;
        Py_ssize_t ti = hi[pos]; hi[pos] = hi[parent]; hi[parent] = ti;
        pos = parent;
    }
}

/* Keep the best k of what is offered: a k-sized min-heap whose root is the worst kept. */
static inline void offer(float *hs, Py_ssize_t *hi, Py_ssize_t *size, Py_ssize_t k, float score, Py_ssize_t row) {
    if (*size < k) { hs[*size] = score; hi[*size] = row; sift_up(hs, hi, *size); (*size)++; }
    else if (worse(hs[0], hi[0], score, row)) { hs[0] = score; hi[0] = row; sift_down(hs, hi, *size, 0); }
}

#define MAX_THREADS 4
#define STACK_HEAP 256 /* heap entries kept on the stack; more are allocated */
#define BYTES_PER_THREAD ((Py_ssize_t)3 << 19) /* 1.5 MiB */
static int scan_threads = 0; /* 0: as many as the matrix size and the online cores allow */
static long online_cores = 1; /* read once at import: sysconf reads /sys on every call, microseconds */

typedef struct {
    const int8_t *matrix, *query;
    const float *scales;
    Py_ssize_t width, first, last, k, size, ahead;
    float *hs;
    Py_ssize_t *hi;
} topk_job;

/* Score rows [first, last) a block at a time into a small buffer (the kernels work on row blocks) and
 * offer each score to the job's heap; nothing of size N is allocated. */
static void *run_topk(void *arg) {
    topk_job *job = (topk_job *)arg;
    /* locals, not job fields, in the hot loop: stores into the heap could alias the job, and the
     * compiler would reload every field per row (8 ns a row, measured) */
    const int8_t *matrix = job->matrix, *query = job->query;
    const float *scales = job->scales;
    const Py_ssize_t width = job->width, last = job->last, k = job->k, ahead = job->ahead;
    float *hs = job->hs;
    Py_ssize_t *hi = job->hi, size = 0;
    float block[SCAN_BLOCK];
    for (Py_ssize_t start = job->first; start < last && k > 0; start += SCAN_BLOCK) {
        Py_ssize_t count = last - start < SCAN_BLOCK ? last - start : SCAN_BLOCK;
        current_scan(matrix + start * width, width, count, query, scales + start, block, ahead);
        for (Py_ssize_t j = 0; j < count; j++) offer(hs, hi, &size, k, block[j], start + j);
    }
    job->size = size;
    return NULL;
}

static int threads_for(Py_ssize_t bytes, Py_ssize_t rows) {
    Py_ssize_t wanted = scan_threads > 0 ? scan_threads : bytes / BYTES_PER_THREAD;
    if (scan_threads == 0 && wanted > online_cores) wanted = online_cores;
    if (wanted > MAX_THREADS) wanted = MAX_THREADS;
    if (wanted > rows / SCAN_BLOCK) wanted = rows / SCAN_BLOCK;
    return wanted < 1 ? 1 : (int)wanted;
}

static PyObject *py_topk(PyObject *self, PyObject *args) {
    Py_buffer m, s, q;
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "y*y*y*n", &m, &s, &q, &k)) return NULL;
    Py_ssize_t rows, width;
    PyObject *result = NULL;
    if (check_inputs(&m, &s, &q, &rows, &width)) {
        if (k > rows) k = rows;
        if (k < 0) k = 0;
        int threads = threads_for(m.len, rows);
        /* the heaps of a usual k fit on the stack: an allocation is a tenth of a 250-tool scan */
        float stack_hs[STACK_HEAP];
        Py_ssize_t stack_hi[STACK_HEAP];
        int on_stack = (Py_ssize_t)threads * (k + 1) <= STACK_HEAP;
        float *hs = on_stack ? stack_hs : PyMem_Malloc((size_t)threads * (k + 1) * sizeof(float));
        Py_ssize_t *hi = on_stack ? stack_hi : PyMem_Malloc((size_t)threads * (k + 1) * sizeof(Py_ssize_t));
        if (!hs || !hi) { if (!on_stack) { PyMem_Free(hs); PyMem_Free(hi); } PyErr_NoMemory(); goto done; }
        topk_job jobs[MAX_THREADS];
        pthread_t workers[MAX_THREADS];
        int started[MAX_THREADS] = {0};
        for (int t = 0; t < threads; t++) {
            jobs[t] = (topk_job){(const int8_t *)m.buf, (const int8_t *)q.buf, (const float *)s.buf, width,
                                 rows * t / threads, rows * (t + 1) / threads, k, 0,
                                 prefetch_ahead(m.len, width), hs + t * (k + 1), hi + t * (k + 1)};
        }
        int release = m.len >= (1 << 16);
        PyThreadState *state = release ? PyEval_SaveThread() : NULL;
        for (int t = 1; t < threads; t++) started[t] = pthread_create(&workers[t], NULL, run_topk, &jobs[t]) == 0;
        run_topk(&jobs[0]);
        for (int t = 1; t < threads; t++) {
            if (started[t]) pthread_join(workers[t], NULL);
            else run_topk(&jobs[t]); /* no thread to be had: the same rows, here */
            for (Py_ssize_t j = 0; j < jobs[t].size; j++)
                offer(jobs[0].hs, jobs[0].hi, &jobs[0].size, k, jobs[t].hs[j], jobs[t].hi[j]);
        }
        if (release) PyEval_RestoreThread(state); /* Python objects below need the GIL */
        Py_ssize_t size = jobs[0].size;
        float *best_s = jobs[0].hs;
        Py_ssize_t *best_i = jobs[0].hi;
        /* Pop worst-first into the tail: best ends up first. */
        PyObject *indices = PyByteArray_FromStringAndSize(NULL, size * (Py_ssize_t)sizeof(int64_t));
        PyObject *scores = PyByteArray_FromStringAndSize(NULL, size * (Py_ssize_t)sizeof(float));
        if (indices && scores) {
            int64_t *oi = (int64_t *)PyByteArray_AS_STRING(indices);
            float *os = (float *)PyByteArray_AS_STRING(scores);
            for (Py_ssize_t n = size; n > 0; n--) {
                oi[n - 1] = best_i[0]; os[n - 1] = best_s[0];
                best_s[0] = best_s[n - 1]; best_i[0] = best_i[n - 1];
                sift_down(best_s, best_i, n - 1, 0);
            }
        }
        if (!on_stack) { PyMem_Free(hs); PyMem_Free(hi); }
        if (indices && scores) result = Py_BuildValue("(NN)", indices, scores);
        else { Py_XDECREF(indices); Py_XDECREF(scores); }
    }
done:
    PyBuffer_Release(&m); PyBuffer_Release(&s); PyBuffer_Release(&q);
    return result;
}

static PyObject *py_set_threads(PyObject *self, PyObject *args) {
    int n;
    if (!PyArg_ParseTuple(args, "i", &n)) return NULL;
    if (n < 0 || n > MAX_THREADS) { PyErr_Format(PyExc_ValueError, "threads must be 0 (auto) to %d, got %d", MAX_THREADS, n); return NULL; }
    scan_threads = n;
    Py_RETURN_NONE;
}

static PyObject *py_set_prefetch(PyObject *self, PyObject *args) {
    int enabled;
    if (!PyArg_ParseTuple(args, "p", &enabled)) return NULL;
    prefetch_enabled = enabled;
    Py_RETURN_NONE;
}

static PyObject *py_threads_for(PyObject *self, PyObject *args) {
    Py_ssize_t rows, width;
    if (!PyArg_ParseTuple(args, "nn", &rows, &width)) return NULL;
    return PyLong_FromLong(threads_for(rows * width, rows));
}

static PyObject *py_kernel(PyObject *self, PyObject *noargs) { return PyUnicode_FromString(current_name); }

static PyObject *py_available(PyObject *self, PyObject *noargs) {
    const char *names[] = {"vnni", "avx2", "neon", "serial"};
    PyObject *list = PyList_New(0);
    for (int i = 0; i < 4; i++)
        if (kernel_available(names[i])) { PyObject *n = PyUnicode_FromString(names[i]); PyList_Append(list, n); Py_DECREF(n); }
    return list;
}

static PyObject *py_set_kernel(PyObject *self, PyObject *args) {
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
    if (!use_kernel(name)) { PyErr_Format(PyExc_ValueError, "kernel %s is not available on this CPU", name); return NULL; }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"scan", py_scan, METH_VARARGS, "scan(matrix, scales, query) -> bytearray of float32 scores"},
    {"topk", py_topk, METH_VARARGS, "topk(matrix, scales, query, k) -> (int64 rows, float32 scores), best first"},
    {"kernel", py_kernel, METH_NOARGS, "the kernel in use"},
    {"available_kernels", py_available, METH_NOARGS, "kernels this CPU can run, fastest first"},
    {"set_kernel", py_set_kernel, METH_VARARGS, "force a kernel (tests)"},
    {"set_threads", py_set_threads, METH_VARARGS, "threads a large top-k scan may use: 0 = auto (default), 1..4"},
    {"set_prefetch", py_set_prefetch, METH_VARARGS, "prefetch the rows of a matrix too large for the cache (default True)"},
    {"threads_for", py_threads_for, METH_VARARGS, "threads_for(rows, width) -> threads a top-k scan would use"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_slb", "INT8 SLB scan kernels", -1, methods};

PyMODINIT_FUNC PyInit__slb(void) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    online_cores = online > 0 ? online : 1;
    if (!use_kernel("vnni") && !use_kernel("avx2") && !use_kernel("neon")) use_kernel("serial");
    return PyModule_Create(&module);
}
