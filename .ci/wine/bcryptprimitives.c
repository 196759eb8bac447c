/*
 * bcryptprimitives.dll for Wine: Go's Windows runtime (1.22 and later)
 * takes its random bytes from ProcessPrng, which Debian's Wine 8 does not
 * export, so a Go program stops before main. This DLL exports ProcessPrng
 * over advapi32's RtlGenRandom (SystemFunction036), which Wine has.
 * .ci/wine/run builds it with mingw-w64 and puts it in the Wine prefix's
 * system32. For tests under Wine only; Windows has the real one.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buf, ULONG len);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
