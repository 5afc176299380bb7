// fuzzgen seed 9000137 in OpenCL C (session 31): right when the Intel OpenCL CPU device compiles
// it from source, wrong as clang-22's SPIR-V in work-groups of 32 or more (items 16 and up lose
// both o8 stores). run_opencl_c_as_spirv.py runs it both ways.
__kernel void k(__global double* o8, __global long* o10, int s6, double s7) {
  ulong g = get_global_id(0);
  uint gid = (uint)g;
  o8[gid * 3u + 1u] = -14.0;
  o8[gid * 3u + 2u] = -31.0;
  o10[g] = -1L << ((12 - g) & 63);
}
