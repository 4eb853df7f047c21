rchar: 1685852
wchar: 1711
syscr: 668
syscw: 29
read_bytes: 24576
write_bytes: 8192
cancelled_write_bytes: 0
