// The benchmark kernels in OpenCL C, written like the kdsl examples (same algorithm, same
// work-group shapes), for Intel's own OpenCL C compiler on the CPU device.

__kernel void saxpy(__global float* restrict y, __global const float* restrict x, float a, uint n) {
    uint i = get_global_id(0);
    if (i < n) y[i] = a * x[i] + y[i];
}

__kernel void reduce_sum(__global float* restrict partial_sums, __global const float* restrict input, uint n) {
    __local float scratch[256];
    uint lid = get_local_id(0);
    uint gid = get_global_id(0);
    float value = 0.0f;
    if (gid < n) value = input[gid];
    scratch[lid] = value;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (uint stride = 128; stride > 0; stride >>= 1) {
        if (lid < stride) scratch[lid] += scratch[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
    if (lid == 0) partial_sums[get_group_id(0)] = scratch[0];
}

#define TILE 16
__kernel void matmul(__global float* restrict c, __global const float* restrict a, __global const float* restrict b,
                     uint m, uint n, uint k) {
    __local float a_tile[TILE][TILE];
    __local float b_tile[TILE][TILE];
    uint column = get_global_id(0);
    uint row = get_global_id(1);
    uint local_column = get_local_id(0);
    uint local_row = get_local_id(1);
    float sum = 0.0f;
    for (uint tile = 0; tile < k; tile += TILE) {
        uint a_column = tile + local_column;
        uint b_row = tile + local_row;
        a_tile[local_row][local_column] = (row < m && a_column < k) ? a[(ulong)row * k + a_column] : 0.0f;
        b_tile[local_row][local_column] = (b_row < k && column < n) ? b[(ulong)b_row * n + column] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        for (uint i = 0; i < TILE; i++) sum += a_tile[local_row][i] * b_tile[i][local_column];
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
    if (row < m && column < n) c[(ulong)row * n + column] = sum;
}

// One Lloyd assignment step of k-means, `kmeans_assign` of examples/kmeans.krn: samples are the
// columns of the feature-major x_t (n_features x n_samples), centroids_t is n_features x
// n_clusters; each work-group walks the centroids in windows of KM_WINDOW_CENTROIDS, one
// KM_WINDOW_FEATURES x KM_WINDOW_CENTROIDS tile of centroid coordinates in local memory at a
// time (one value per work-item), each work-item keeps its sample's dot products with the
// window in a private array, the nearest centroid minimises |c|^2 / 2 - x.c, and the sums and
// counts go to copy get_group_id(0) % KM_COPIES (COPIES x n_clusters x n_features and
// COPIES x n_clusters, zero on entry).
//
// Atomics: kdsl's SPIR-V uses OpAtomicFAddEXT (SPV_EXT_shader_atomic_float_add; in its LLVM IR
// `atomicrmw fadd ... syncscope("device") monotonic`) for the sums and OpAtomicIAdd for the
// counts, both relaxed at device scope. The same operation in OpenCL C is cl_ext_float_atomics'
// atomic_fetch_add_explicit on atomic_float, which needs OpenCL C 2.0 or later (bench_cpu.py
// builds this file with -cl-std=CL3.0 for this kernel; the Intel CPU runtime has
// cl_ext_float_atomics). Built as OpenCL C 1.2, which has no float atomic add, it falls back to
// a compare-exchange loop on the bits with atomic_cmpxchg. x86 has no float atomic add, so
// either way the CPU runs a lock cmpxchg loop in the end.
#define KM_WINDOW_CENTROIDS 32
#define KM_WINDOW_FEATURES 8
#define KM_GROUP (KM_WINDOW_FEATURES * KM_WINDOW_CENTROIDS)
#define KM_COPIES 8

#if __OPENCL_C_VERSION__ >= 200 && defined(cl_ext_float_atomics)
static inline void km_atomic_add_float(volatile __global float* p, float value) {
    atomic_fetch_add_explicit((volatile __global atomic_float*)p, value, memory_order_relaxed, memory_scope_device);
}
static inline void km_atomic_add_uint(volatile __global uint* p, uint value) {
    atomic_fetch_add_explicit((volatile __global atomic_uint*)p, value, memory_order_relaxed, memory_scope_device);
}
#else
static inline void km_atomic_add_float(volatile __global float* p, float value) {
    uint expected = as_uint(*p);
    for (;;) {
        uint seen = atomic_cmpxchg((volatile __global uint*)p, expected, as_uint(as_float(expected) + value));
        if (seen == expected) break;
        expected = seen;
    }
}
static inline void km_atomic_add_uint(volatile __global uint* p, uint value) { atomic_add(p, value); }
#endif

// Adds feature f of the sample (x) times the window's centroids to the dot products.
static inline void km_accumulate(float* dots, __local const float* tile, uint f, float x) {
#pragma unroll
    for (uint c = 0; c < KM_WINDOW_CENTROIDS; c++) dots[c] += x * tile[f * KM_WINDOW_CENTROIDS + c];
}

// kdsl's `nearest` returns the tuple (cluster, distance); here a struct returned by value.
typedef struct {
    uint cluster;
    float distance;
} km_best;

static inline km_best km_nearest(km_best best, const float* dots, __global const float* restrict half_norms, uint window,
                                 uint n_clusters) {
#pragma unroll
    for (uint c = 0; c < KM_WINDOW_CENTROIDS; c++) {
        uint candidate = window + c;
        if (candidate < n_clusters) {
            float d = half_norms[candidate] - dots[c];
            if (d < best.distance) {
                best.cluster = candidate;
                best.distance = d;
            }
        }
    }
    return best;
}

__kernel __attribute__((reqd_work_group_size(KM_GROUP, 1, 1))) void kmeans_assign(
    __global uint* restrict labels, __global float* restrict sums, __global uint* restrict counts,
    __global const float* restrict x_t, __global const float* restrict centroids_t,
    __global const float* restrict half_norms, uint n_samples, uint n_features, uint n_clusters) {
    __local float tile[KM_GROUP];
    uint sample = get_global_id(0);
    uint lid = get_local_id(0);
    uint tile_feature = lid / KM_WINDOW_CENTROIDS;
    uint tile_centroid = lid % KM_WINDOW_CENTROIDS;
    km_best best = {0, INFINITY};
    float dots[KM_WINDOW_CENTROIDS];
    for (uint window = 0; window < n_clusters; window += KM_WINDOW_CENTROIDS) {
#pragma unroll
        for (uint c = 0; c < KM_WINDOW_CENTROIDS; c++) dots[c] = 0.0f;
        for (uint feature_window = 0; feature_window < n_features; feature_window += KM_WINDOW_FEATURES) {
            uint feature = feature_window + tile_feature;
            uint cluster = window + tile_centroid;
            float value = 0.0f;
            if (feature < n_features && cluster < n_clusters) value = centroids_t[feature * n_clusters + cluster];
            tile[lid] = value;
            barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
            if (sample < n_samples) {
                for (uint f = 0; f < KM_WINDOW_FEATURES; f++) {
                    if (feature_window + f < n_features) {
                        float x = x_t[(feature_window + f) * n_samples + sample];
                        km_accumulate(dots, tile, f, x);
                    }
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        }
        best = km_nearest(best, dots, half_norms, window, n_clusters);
    }
    if (sample < n_samples) {
        uint cluster = best.cluster;
        labels[sample] = cluster;
        uint copy = get_group_id(0) % KM_COPIES;
        km_atomic_add_uint(&counts[copy * n_clusters + cluster], 1);
        uint row = (copy * n_clusters + cluster) * n_features;
        for (uint feature = 0; feature < n_features; feature++)
            km_atomic_add_float(&sums[row + feature], x_t[feature * n_samples + sample]);
    }
}

// crates/kdsl-bench/inputs/index_forms.krn: 32-bit row-major indices written with `int`.
__kernel void scale2d(__global float* restrict output, __global const float* restrict input, int n, float factor) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    output[y * n + x] = input[y * n + x] * factor;
}

__kernel void stencil2d(__global float* restrict output, __global const float* restrict input, int n) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x > 0 && y > 0 && x < n - 1 && y < n - 1) {
        int c = y * n + x;
        output[c] = 0.2f * (input[c] + input[c - 1] + input[c + 1] + input[c - n] + input[c + n]);
    }
}

// examples/stencil.krn: interior points averaged with their four neighbours, border copied.
__kernel void stencil(__global float* restrict output, __global const float* restrict input, uint width, uint height) {
    uint x = get_global_id(0);
    uint y = get_global_id(1);
    if (x < width && y < height) {
        ulong row = width;
        ulong index = (ulong)y * row + x;
        if (x == 0 || y == 0 || x == width - 1 || y == height - 1) {
            output[index] = input[index];
        } else {
            output[index] = 0.2f * (input[index] + input[index - 1] + input[index + 1] + input[index - row] + input[index + row]);
        }
    }
}
