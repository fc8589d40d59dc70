# Load and unload this project's modules repeatedly; while rdma_ucm is
# loaded, its command header checks answer with the C module's errnos.
for i in 1 2 3; do
	modprobe rdma_rxe && modprobe rdma_ucm || { echo "load $i failed"; exit 1; }
	python3 - <<'PY' || exit 1
import errno, os, struct
fd = os.open("/dev/infiniband/rdma_cm", os.O_RDWR)
def expect(buf, want):
    try:
        os.write(fd, buf)
        got = 0
    except OSError as e:
        got = e.errno
    assert got == want, f"write of {buf!r}: errno {got}, want {want}"
expect(b"\0" * 7, errno.EINVAL)                          # shorter than the header
expect(struct.pack("=IHH", 25, 0, 0), errno.EINVAL)       # unknown command
expect(struct.pack("=IHH", 0, 24, 0), errno.EINVAL)       # in beyond the write
expect(struct.pack("=IHH", 0, 0, 0), errno.ENOSPC)        # CREATE_ID with no room for the answer
os.close(fd)
print("ucma header checks ok")
PY
	modprobe -r rdma_ucm && modprobe -r rdma_rxe || { echo "unload $i failed"; exit 1; }
	grep -qE '^(rdma_rxe|rdma_ucm) ' /proc/modules && { echo "still loaded after unload $i"; exit 1; }
done
echo ok
