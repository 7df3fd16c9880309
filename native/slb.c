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
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define NEXUS_X86 1
#endif
#if defined(__aarch64__)
#include <arm_neon.h>
#define NEXUS_NEON 1
#endif

typedef int32_t (*dot_fn)(const int8_t *a, const int8_t *b, Py_ssize_t n);

static int32_t dot_serial(const int8_t *a, const int8_t *b, Py_ssize_t n) {
    int32_t sum = 0;
    for (Py_ssize_t i = 0; i < n; i++) sum += (int32_t)a[i] * (int32_t)b[i];
    return sum;
}

#ifdef NEXUS_X86
/* maddubs multiplies unsigned by signed bytes: feed it |a| and b carrying a's sign. Pairs of products
 * fit int16 because both sides are clipped to [-127, 127] (127 * 127 * 2 = 32258 < 32767). */
__attribute__((target("avx2"))) static int32_t dot_avx2(const int8_t *a, const int8_t *b, Py_ssize_t n) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    Py_ssize_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m256i va0 = _mm256_loadu_si256((const __m256i *)(a + i));
        __m256i vb0 = _mm256_loadu_si256((const __m256i *)(b + i));
        __m256i va1 = _mm256_loadu_si256((const __m256i *)(a + i + 32));
        __m256i vb1 = _mm256_loadu_si256((const __m256i *)(b + i + 32));
        __m256i p0 = _mm256_maddubs_epi16(_mm256_sign_epi8(va0, va0), _mm256_sign_epi8(vb0, va0));
        __m256i p1 = _mm256_maddubs_epi16(_mm256_sign_epi8(va1, va1), _mm256_sign_epi8(vb1, va1));
        acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(p0, ones));
        acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(p1, ones));
    }
    __m256i acc = _mm256_add_epi32(acc0, acc1);
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    s = _mm_hadd_epi32(s, s);
    s = _mm_hadd_epi32(s, s);
    int32_t sum = _mm_cvtsi128_si32(s);
    for (; i < n; i++) sum += (int32_t)a[i] * (int32_t)b[i];
    return sum;
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static int32_t dot_vnni(const int8_t *a, const int8_t *b,
                                                                               Py_ssize_t n) {
    __m512i acc = _mm512_setzero_si512();
    Py_ssize_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512i va = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(a + i)));
        __m512i vb = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(b + i)));
        acc = _mm512_dpwssd_epi32(acc, va, vb); /* signed 16x16 -> 32, VNNI */
    }
    int32_t sum = _mm512_reduce_add_epi32(acc);
    for (; i < n; i++) sum += (int32_t)a[i] * (int32_t)b[i];
    return sum;
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
#endif

static dot_fn current_dot = dot_serial;
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
    if (strcmp(name, "serial") == 0) { current_dot = dot_serial; current_name = "serial"; return 1; }
#ifdef NEXUS_X86
    if (strcmp(name, "avx2") == 0) { current_dot = dot_avx2; current_name = "avx2"; return 1; }
    if (strcmp(name, "vnni") == 0) { current_dot = dot_vnni; current_name = "vnni"; return 1; }
#endif
#ifdef NEXUS_NEON
    if (strcmp(name, "neon") == 0) { current_dot = dot_neon; current_name = "neon"; return 1; }
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
            for (Py_ssize_t r = 0; r < rows; r++) scores[r] = (float)current_dot(matrix + r * width, query, width) * scales[r];
            if (release) PyEval_RestoreThread(state);
        }
    }
    PyBuffer_Release(&m); PyBuffer_Release(&s); PyBuffer_Release(&q);
    return out;
}

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

static PyObject *py_topk(PyObject *self, PyObject *args) {
    Py_buffer m, s, q;
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "y*y*y*n", &m, &s, &q, &k)) return NULL;
    Py_ssize_t rows, width;
    PyObject *result = NULL;
    if (check_inputs(&m, &s, &q, &rows, &width)) {
        if (k > rows) k = rows;
        if (k < 0) k = 0;
        float *hs = PyMem_Malloc((k + 1) * sizeof(float));
        Py_ssize_t *hi = PyMem_Malloc((k + 1) * sizeof(Py_ssize_t));
        if (!hs || !hi) { PyMem_Free(hs); PyMem_Free(hi); PyErr_NoMemory(); goto done; }
        const int8_t *matrix = (const int8_t *)m.buf, *query = (const int8_t *)q.buf;
        const float *scales = (const float *)s.buf;
        Py_ssize_t size = 0;
        int release = m.len >= (1 << 16);
        PyThreadState *state = release ? PyEval_SaveThread() : NULL;
        for (Py_ssize_t r = 0; r < rows && k > 0; r++) {
            float score = (float)current_dot(matrix + r * width, query, width) * scales[r];
            if (size < k) { hs[size] = score; hi[size] = r; sift_up(hs, hi, size); size++; }
            else if (worse(hs[0], hi[0], score, r)) { hs[0] = score; hi[0] = r; sift_down(hs, hi, size, 0); }
        }
        /* Pop worst-first into the tail: best ends up first. */
        PyObject *indices = PyByteArray_FromStringAndSize(NULL, size * (Py_ssize_t)sizeof(int64_t));
        PyObject *scores = PyByteArray_FromStringAndSize(NULL, size * (Py_ssize_t)sizeof(float));
        if (indices && scores) {
            int64_t *oi = (int64_t *)PyByteArray_AS_STRING(indices);
            float *os = (float *)PyByteArray_AS_STRING(scores);
            for (Py_ssize_t n = size; n > 0; n--) {
                oi[n - 1] = hi[0]; os[n - 1] = hs[0];
                hs[0] = hs[n - 1]; hi[0] = hi[n - 1];
                sift_down(hs, hi, n - 1, 0);
            }
        }
        if (release) PyEval_RestoreThread(state);
        PyMem_Free(hs); PyMem_Free(hi);
        if (indices && scores) result = Py_BuildValue("(NN)", indices, scores);
        else { Py_XDECREF(indices); Py_XDECREF(scores); }
    }
done:
    PyBuffer_Release(&m); PyBuffer_Release(&s); PyBuffer_Release(&q);
    return result;
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
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_slb", "INT8 SLB scan kernels", -1, methods};

PyMODINIT_FUNC PyInit__slb(void) {
    if (!use_kernel("vnni") && !use_kernel("avx2") && !use_kernel("neon")) use_kernel("serial");
    return PyModule_Create(&module);
}
