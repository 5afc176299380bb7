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
