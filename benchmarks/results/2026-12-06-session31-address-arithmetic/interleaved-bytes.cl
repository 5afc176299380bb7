// fuzzgen seed 9000457 (session 31): the Intel OpenCL CPU device's compiler aborts ("Cannot emit
// physreg copy instruction") building this from source; with a uint index, or without
// restrict, it builds. build_interleaved_bytes.py tries both.
__kernel void fuzz(__global char* restrict b, __global char* restrict a) {
  size_t g = get_global_id(0);
  a[g * 3] = a[g * 3 + 1] * b[g];
  a[g * 3 + 1] = -(a[g * 3 + 2] * (b[g] - a[g * 3]));
}
