__kernel void fuzz(__global short* out, uint n) {
  __local int tally[64];
  uint gid = get_global_id(0);
  out[gid*3+2] = (short)((0x8000u | n) - n);
  for (uchar i = 3; i < 8; i++) atomic_min(&tally[0], (int)n);
}
