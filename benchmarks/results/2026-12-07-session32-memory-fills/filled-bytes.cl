// fuzzgen seed 9011949 (session 32) in OpenCL C: a private byte array filled with a runtime
// byte, then an integer max, then the array read back at a runtime index.
kernel void fill(global double *out, global const short *values, global float *side, uint n) {
    size_t g = get_global_id(0);
    char bytes[3];
    for (uint k = 0; k < 3; k++)
        bytes[k] = (char)n;
    short m = max(values[2], (short)-4);
    out[g] = (double)bytes[n % 3];
    side[g] = (float)m;
}
