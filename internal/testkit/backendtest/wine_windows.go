package backendtest

import "syscall"

// UnderWine reports whether the program runs under Wine, whose ntdll
// exports wine_get_version (Windows' does not).
func UnderWine() bool {
	d, err := syscall.LoadDLL("ntdll.dll")
	if err != nil {
		return false
	}
	_, err = d.FindProc("wine_get_version")
	return err == nil
}
