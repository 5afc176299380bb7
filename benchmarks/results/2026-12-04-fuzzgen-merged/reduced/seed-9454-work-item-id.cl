// The OpenCL C twin of seed-9454-work-item-id.krn: every element must be 2.
__kernel void fuzz(int s, __global uchar *out) {
    uint gid = get_global_id(0);
    if (s == 5) {
        out[gid] = 9;
    } else {
        out[gid] = (uchar)((8u - ((uint)get_global_id(0) - gid)) % 3u);
    }
}
