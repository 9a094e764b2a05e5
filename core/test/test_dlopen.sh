#!/bin/sh
# SPDX-License-Identifier: MIT
# libfabric.so.1 as its dlopen() users see it (Open MPI's ofi components,
# Python ctypes): no static-TLS flag and no large TLS block (glibc refuses
# those in dlopen with "cannot allocate memory in static TLS block"), and
# loading it by path from a program that does not link it, from C and from
# Python, lists the shm provider. TAP.

: "${top_builddir:?top_builddir must be set}"
lib=$top_builddir/weft/.libs/libfabric.so.1
probe=$top_builddir/core/test/dlopen_probe
# TLS bytes the library may keep: glibc's spare static TLS is a few hundred
# bytes shared by every library loaded late, so stay far below it.
tls_max=64

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }

echo "1..4"
if readelf -d "$lib" | grep -q STATIC_TLS; then
	not_ok "libfabric.so.1 has no STATIC_TLS flag"
	readelf -d "$lib" | grep FLAGS | sed 's/^/# /'
else
	ok "libfabric.so.1 has no STATIC_TLS flag"
fi

tls=$(readelf -lW "$lib" | awk '$1 == "TLS" { print $6 }')
tls=$((${tls:-0}))
if [ "$tls" -le "$tls_max" ]; then
	ok "TLS block is $tls bytes (at most $tls_max)"
else
	not_ok "TLS block is $tls bytes (at most $tls_max)"
fi

# A sanitizer build's library needs the sanitizer runtime loaded first in
# an uninstrumented program (python3); the probe is instrumented itself.
preload=$(ldd "$lib" 2>/dev/null |
	awk '/libasan|libubsan/ { printf "%s%s", sep, $3; sep = ":" }')

out=$(env -u FI_PROVIDER ASAN_OPTIONS=detect_leaks=0 "$probe" "$lib" shm 2>&1)
if [ $? -eq 0 ]; then
	ok "a C program dlopen()s libfabric.so.1 and lists shm"
else
	not_ok "a C program dlopen()s libfabric.so.1 and lists shm"
	printf '%s\n' "$out" | sed 's/^/# /'
fi

if ! command -v python3 >/dev/null 2>&1; then
	skip "python3 ctypes: python3 is not installed"
	exit 0
fi
out=$(env -u FI_PROVIDER ${preload:+LD_PRELOAD="$preload"} \
	ASAN_OPTIONS=detect_leaks=0 python3 - "$lib" 2>&1 <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.fi_version.restype = ctypes.c_uint32
info = ctypes.c_void_p()
ret = lib.fi_getinfo(lib.fi_version(), None, None, ctypes.c_uint64(0), None,
                     ctypes.byref(info))
if ret != 0 or not info:
    sys.exit("fi_getinfo returned %d" % ret)
lib.fi_tostr.restype = ctypes.c_char_p
text = lib.fi_tostr(info, 0).decode()    # FI_TYPE_INFO
lib.fi_freeinfo(info)
if "prov_name: shm" not in text:
    sys.exit("shm not in fi_tostr(FI_TYPE_INFO):\n" + text[:2000])
print("ok")
PY
)
if [ $? -eq 0 ]; then
	ok "Python ctypes.CDLL loads libfabric.so.1 and lists shm"
else
	not_ok "Python ctypes.CDLL loads libfabric.so.1 and lists shm"
	printf '%s\n' "$out" | sed 's/^/# /'
fi
