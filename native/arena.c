/*
 * nexus_gateway._arena: the block arena, where loaded KV blocks live between splices.
 *
 * One page-aligned allocation holds `slots` slots of `slot_bytes` bytes each (slot_bytes rounded up to
 * the page size, so every block starts on its own page). Blocks are keyed by a 64-bit key; a full
 * arena evicts its least recently used slot. Every operation takes one mutex; the copies in and out run
 * with the GIL released, so Python threads load, splice and evict concurrently and a reader never sees a
 * half-written block (the copy happens under the mutex).
 *
 * Layout: the mutex sits alone on its own 128-byte line (two 64-byte lines: adjacent-line prefetch),
 * the hot counters on the next; both are checked at compile time. Nothing is allocated after creation.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE 128

typedef struct {
    uint64_t key;
    uint64_t used;  /* LRU tick; 0 = free */
    Py_ssize_t size;
} slot_meta;

/* The shared state, allocated 128-byte aligned on its own (a Python object is only 16-byte aligned). */
typedef struct {
    alignas(LINE) pthread_mutex_t lock;
    alignas(LINE) uint64_t tick;
    uint64_t hits, misses, evictions;
    Py_ssize_t slots, slot_bytes;
    slot_meta *meta;
    unsigned char *pages;
} core_t;

_Static_assert(offsetof(core_t, lock) == 0, "the mutex starts the first 128-byte line");
_Static_assert(sizeof(pthread_mutex_t) <= LINE, "the mutex fits its line");
_Static_assert(offsetof(core_t, tick) == LINE, "the hot counters start the next line: nothing shares the mutex's");
_Static_assert(_Alignof(core_t) == LINE, "the whole core is line-aligned");

typedef struct {
    PyObject_HEAD
    core_t *c;
} Arena;

static Py_ssize_t find_slot(core_t *a, uint64_t key) {
    for (Py_ssize_t i = 0; i < a->slots; i++)
        if (a->meta[i].used && a->meta[i].key == key) return i;
    return -1;
}

static Py_ssize_t victim(core_t *a) {
    Py_ssize_t best = 0;
    for (Py_ssize_t i = 0; i < a->slots; i++) {
        if (!a->meta[i].used) return i;
        if (a->meta[i].used < a->meta[best].used) best = i;
    }
    return best;
}

static int Arena_init(Arena *self, PyObject *args, PyObject *kwds) {
    static char *names[] = {"slots", "slot_bytes", NULL};
    Py_ssize_t slots, slot_bytes;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "nn", names, &slots, &slot_bytes)) return -1;
    if (slots <= 0 || slot_bytes <= 0) {
        PyErr_SetString(PyExc_ValueError, "slots and slot_bytes must be positive");
        return -1;
    }
    if (self->c) {
        PyErr_SetString(PyExc_RuntimeError, "arena already initialised");
        return -1;
    }
    const Py_ssize_t page = (Py_ssize_t)sysconf(_SC_PAGESIZE);
    slot_bytes = (slot_bytes + page - 1) / page * page;
    void *core = NULL, *pages = NULL;
    slot_meta *meta = calloc((size_t)slots, sizeof(slot_meta));
    if (!meta || posix_memalign(&core, LINE, sizeof(core_t)) != 0 ||
        posix_memalign(&pages, (size_t)page, (size_t)(slots * slot_bytes)) != 0) {
        free(meta);
        free(core);
        PyErr_NoMemory();
        return -1;
    }
    core_t *c = core;
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    c->pages = pages;
    c->meta = meta;
    c->slots = slots;
    c->slot_bytes = slot_bytes;
    self->c = c;
    return 0;
}

static void Arena_dealloc(Arena *self) {
    if (self->c) {
        pthread_mutex_destroy(&self->c->lock);
        free(self->c->pages);
        free(self->c->meta);
        free(self->c);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static core_t *ready(Arena *self) {
    if (!self->c) PyErr_SetString(PyExc_RuntimeError, "arena not initialised");
    return self->c;
}

/* put(key, data) -> slot: copy data in (replacing the key's old block, else the LRU block). */
static PyObject *Arena_put(Arena *self, PyObject *args) {
    unsigned long long key;
    Py_buffer data;
    core_t *c = ready(self);
    if (!c || !PyArg_ParseTuple(args, "Ky*", &key, &data)) return NULL;
    if (data.len > c->slot_bytes) {
        PyErr_Format(PyExc_ValueError, "block of %zd bytes does not fit a %zd-byte slot", data.len, c->slot_bytes);
        PyBuffer_Release(&data);
        return NULL;
    }
    Py_ssize_t slot;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&c->lock);
    slot = find_slot(c, key);
    if (slot < 0) {
        slot = victim(c);
        if (c->meta[slot].used) c->evictions++;
    }
    memcpy(c->pages + slot * c->slot_bytes, data.buf, (size_t)data.len);
    c->meta[slot].key = key;
    c->meta[slot].size = data.len;
    c->meta[slot].used = ++c->tick;
    pthread_mutex_unlock(&c->lock);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    return PyLong_FromSsize_t(slot);
}

/* get_into(key, out) -> size or -1: copy the key's block into the writable buffer out. */
static PyObject *Arena_get_into(Arena *self, PyObject *args) {
    unsigned long long key;
    Py_buffer out;
    core_t *c = ready(self);
    if (!c || !PyArg_ParseTuple(args, "Kw*", &key, &out)) return NULL;
    Py_ssize_t size = -1;
    int too_small = 0;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&c->lock);
    Py_ssize_t slot = find_slot(c, key);
    if (slot < 0) {
        c->misses++;
    } else if (c->meta[slot].size > out.len) {
        too_small = 1;
    } else {
        size = c->meta[slot].size;
        memcpy(out.buf, c->pages + slot * c->slot_bytes, (size_t)size);
        c->meta[slot].used = ++c->tick;
        c->hits++;
    }
    pthread_mutex_unlock(&c->lock);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&out);
    if (too_small) {
        PyErr_SetString(PyExc_ValueError, "output buffer smaller than the block");
        return NULL;
    }
    return PyLong_FromSsize_t(size);
}

static PyObject *Arena_evict(Arena *self, PyObject *args) {
    unsigned long long key;
    core_t *c = ready(self);
    if (!c || !PyArg_ParseTuple(args, "K", &key)) return NULL;
    int found;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&c->lock);
    Py_ssize_t slot = find_slot(c, key);
    found = slot >= 0;
    if (found) {
        c->meta[slot].used = 0;
        c->evictions++;
    }
    pthread_mutex_unlock(&c->lock);
    Py_END_ALLOW_THREADS
    return PyBool_FromLong(found);
}

static PyObject *Arena_stats(Arena *self, PyObject *Py_UNUSED(ignored)) {
    core_t *c = ready(self);
    if (!c) return NULL;
    Py_ssize_t used = 0;
    uint64_t hits, misses, evictions;
    pthread_mutex_lock(&c->lock);
    for (Py_ssize_t i = 0; i < c->slots; i++) used += c->meta[i].used != 0;
    hits = c->hits, misses = c->misses, evictions = c->evictions;
    pthread_mutex_unlock(&c->lock);
    return Py_BuildValue("{s:n,s:n,s:n,s:K,s:K,s:K,s:K,s:K}", "slots", c->slots, "slot_bytes", c->slot_bytes,
                         "used", used, "hits", (unsigned long long)hits, "misses", (unsigned long long)misses,
                         "evictions", (unsigned long long)evictions,
                         "pages_address", (unsigned long long)(uintptr_t)c->pages,
                         "lock_address", (unsigned long long)(uintptr_t)&c->lock);
}

static PyMethodDef Arena_methods[] = {
    {"put", (PyCFunction)Arena_put, METH_VARARGS, "put(key, data) -> slot"},
    {"get_into", (PyCFunction)Arena_get_into, METH_VARARGS, "get_into(key, out) -> size, or -1 if absent"},
    {"evict", (PyCFunction)Arena_evict, METH_VARARGS, "evict(key) -> whether it was present"},
    {"stats", (PyCFunction)Arena_stats, METH_NOARGS, "counters and layout"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ArenaType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "nexus_gateway._arena.Arena",
    .tp_basicsize = sizeof(Arena),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Page-aligned LRU arena of KV blocks (one mutex, copies outside the GIL)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Arena_init,
    .tp_dealloc = (destructor)Arena_dealloc,
    .tp_methods = Arena_methods,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_arena", "KV block arena", -1, NULL};

PyMODINIT_FUNC PyInit__arena(void) {
    if (PyType_Ready(&ArenaType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&ArenaType);
    if (PyModule_AddObject(m, "Arena", (PyObject *)&ArenaType) < 0) {
        Py_DECREF(&ArenaType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
