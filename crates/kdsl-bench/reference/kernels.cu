// The benchmark kernels in CUDA C, written like the kdsl examples (same algorithm, same
// block shapes), built with `nvcc -O3 -arch=sm_90 -ptx` on the GPU machine.

extern "C" __global__ void saxpy(float* __restrict__ y, const float* __restrict__ x, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void reduce_sum(float* __restrict__ partial_sums, const float* __restrict__ input, unsigned n) {
    __shared__ float scratch[256];
    unsigned lid = threadIdx.x;
    unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
    float value = 0.0f;
    if (gid < n) value = input[gid];
    scratch[lid] = value;
    __syncthreads();
    for (unsigned stride = 128; stride > 0; stride >>= 1) {
        if (lid < stride) scratch[lid] += scratch[lid + stride];
        __syncthreads();
    }
    if (lid == 0) partial_sums[blockIdx.x] = scratch[0];
}

#define TILE 16
extern "C" __global__ void matmul(float* __restrict__ c, const float* __restrict__ a, const float* __restrict__ b,
                                  unsigned m, unsigned n, unsigned k) {
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    unsigned column = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned local_column = threadIdx.x;
    unsigned local_row = threadIdx.y;
    float sum = 0.0f;
    for (unsigned tile = 0; tile < k; tile += TILE) {
        unsigned a_column = tile + local_column;
        unsigned b_row = tile + local_row;
        a_tile[local_row][local_column] = (row < m && a_column < k) ? a[(unsigned long long)row * k + a_column] : 0.0f;
        b_tile[local_row][local_column] = (b_row < k && column < n) ? b[(unsigned long long)b_row * n + column] : 0.0f;
        __syncthreads();
        for (unsigned i = 0; i < TILE; i++) sum += a_tile[local_row][i] * b_tile[i][local_column];
        __syncthreads();
    }
    if (row < m && column < n) c[(unsigned long long)row * n + column] = sum;
}
