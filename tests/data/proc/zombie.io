rchar: 0
wchar: 4194304
syscr: 0
syscw: 1
read_bytes: 0
write_bytes: 4194304
cancelled_write_bytes: 0
