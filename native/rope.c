/*
 * nexus_gateway._kv: RoPE re-rotation of F16 key rows, in place.
 *
 * A compiled block's keys were rotated for positions m0.. ; spliced at n_past they must be rotated
 * by delta = n_past - m0 more. RoPE angles add, so that is one more rotation of every pair by
 * theta_i = delta * scale * base^(-2i/n_rot). The Python side computes the cos/sin tables (float32) once
 * per delta and passes them in, so this kernel and the numpy fallback do the same float32 operations
 * in the same order (compiled with -ffp-contract=off: no fused multiply-add) and agree to the bit.
 *
 * Only the block's own rows are touched; llama_memory_seq_add would instead make llama.cpp re-rotate
 * every cell of the cache on the next decode.
 *
 * F16 <-> F32 conversion is ggml's portable one (round to nearest even), no F16C needed.
 *
 * Also here, as the engine's other C helper: the check llama.cpp's abort callback makes (see
 * abort_requested below).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline float bits_to_f32(uint32_t w) {
    float f;
    memcpy(&f, &w, sizeof f);
    return f;
}

static inline uint32_t f32_to_bits(float f) {
    uint32_t w;
    memcpy(&w, &f, sizeof w);
    return w;
}

static inline float half_to_float(uint16_t h) {
    const uint32_t w = (uint32_t)h << 16;
    const uint32_t sign = w & UINT32_C(0x80000000);
    const uint32_t two_w = w + w;
    const uint32_t exp_offset = UINT32_C(0xE0) << 23;
    const float normalized = bits_to_f32((two_w >> 4) + exp_offset) * 0x1.0p-112f;
    const float denormalized = bits_to_f32((two_w >> 17) | (UINT32_C(126) << 23)) - 0.5f;
    const uint32_t cutoff = UINT32_C(1) << 27;
    return bits_to_f32(sign | (two_w < cutoff ? f32_to_bits(denormalized) : f32_to_bits(normalized)));
}

static inline uint16_t float_to_half(float f) {
    float base = (fabsf(f) * 0x1.0p+112f) * 0x1.0p-110f;
    const uint32_t w = f32_to_bits(f);
    const uint32_t shl1_w = w + w;
    const uint32_t sign = w & UINT32_C(0x80000000);
    uint32_t bias = shl1_w & UINT32_C(0xFF000000);
    if (bias < UINT32_C(0x71000000)) bias = UINT32_C(0x71000000);
    base = bits_to_f32((bias >> 1) + UINT32_C(0x07800000)) + base;
    const uint32_t bits = f32_to_bits(base);
    const uint32_t exp_bits = (bits >> 13) & UINT32_C(0x00007C00);
    const uint32_t mantissa_bits = bits & UINT32_C(0x00000FFF);
    const uint32_t nonsign = exp_bits + mantissa_bits;
    return (uint16_t)((sign >> 16) | (shl1_w > UINT32_C(0xFF000000) ? UINT16_C(0x7E00) : nonsign));
}

/* rows: n_rows heads of head_dim F16 values each; cos/sin: n_rot/2 float32 values.
 * neox: pairs (i, i + n_rot/2); otherwise adjacent pairs (2i, 2i + 1). Dimensions past n_rot stay. */
static void rerotate_rows(uint16_t *rows, Py_ssize_t n_rows, Py_ssize_t head_dim, Py_ssize_t n_rot, int neox,
                          const float *cosv, const float *sinv) {
    const Py_ssize_t half = n_rot / 2;
    for (Py_ssize_t r = 0; r < n_rows; r++) {
        uint16_t *x = rows + r * head_dim;
        for (Py_ssize_t i = 0; i < half; i++) {
            const Py_ssize_t a = neox ? i : 2 * i;
            const Py_ssize_t b = neox ? i + half : 2 * i + 1;
            const float x0 = half_to_float(x[a]);
            const float x1 = half_to_float(x[b]);
            const float p = x0 * cosv[i];
            const float q = x1 * sinv[i];
            const float s = x0 * sinv[i];
            const float t = x1 * cosv[i];
            x[a] = float_to_half(p - q);
            x[b] = float_to_half(s + t);
        }
    }
}

static PyObject *py_rerotate(PyObject *self, PyObject *args) {
    Py_buffer keys, cosb, sinb;
    Py_ssize_t head_dim, n_rot;
    int neox;
    if (!PyArg_ParseTuple(args, "w*y*y*nnp", &keys, &cosb, &sinb, &head_dim, &n_rot, &neox)) return NULL;
    PyObject *result = NULL;
    if (head_dim <= 0 || n_rot <= 0 || n_rot > head_dim || n_rot % 2) {
        PyErr_SetString(PyExc_ValueError, "need 0 < n_rot <= head_dim, n_rot even");
    } else if (keys.len % (head_dim * 2)) {
        PyErr_SetString(PyExc_ValueError, "key buffer is not a whole number of F16 heads");
    } else if (cosb.len != sinb.len || cosb.len != (n_rot / 2) * (Py_ssize_t)sizeof(float)) {
        PyErr_SetString(PyExc_ValueError, "cos/sin tables must hold n_rot/2 float32 values each");
    } else {
        const Py_ssize_t n_rows = keys.len / (head_dim * 2);
        Py_BEGIN_ALLOW_THREADS
        rerotate_rows((uint16_t *)keys.buf, n_rows, head_dim, n_rot, neox, (const float *)cosb.buf,
                      (const float *)sinb.buf);
        Py_END_ALLOW_THREADS
        result = Py_None;
        Py_INCREF(result);
    }
    PyBuffer_Release(&keys);
    PyBuffer_Release(&cosb);
    PyBuffer_Release(&sinb);
    return result;
}

/*
 * llama.cpp calls its abort callback between the nodes of every graph it computes, from its own threads.
 * A Python callback would take the GIL hundreds of times per decode (and wait behind the event loop for
 * it); this one reads a flag byte the engine owns, so a stopping gateway cuts a prefill short within
 * a node instead of waiting seconds for the batch to finish.
 */
static bool abort_requested(void *flag) { return *(volatile unsigned char *)flag != 0; }

static PyObject *py_abort_check_address(PyObject *self, PyObject *noargs) {
    return PyLong_FromVoidPtr((void *)abort_requested);
}

static PyMethodDef methods[] = {
    {"rerotate", py_rerotate, METH_VARARGS,
     "rerotate(keys_f16, cos_f32, sin_f32, head_dim, n_rot, neox): rotate every head of keys in place"},
    {"abort_check_address", py_abort_check_address, METH_NOARGS,
     "address of bool abort_requested(void *flag): true once the byte at flag is non-zero"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kv", "KV block kernels: RoPE re-rotation; the engine's abort check", -1, methods};

PyMODINIT_FUNC PyInit__kv(void) { return PyModule_Create(&module); }
