package workloads

import (
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// pidCPU is the CPU time process pid has used, user and system (the
// kernel's work for it), in seconds (0 when it cannot be read: the
// process is gone).
func pidCPU(pid int) (user, sys float64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0
	}
	// The command name may hold spaces: fields start after its ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(s[i+1:])
	// utime and stime are fields 14 and 15 of the line, 12 and 13 here.
	if len(f) < 13 {
		return 0, 0
	}
	u, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, 0
	}
	return u / clockTicks, st / clockTicks
}

// hostCPU is the time every CPU of this host has been busy since boot, in
// seconds: user, nice, system, irq, softirq and steal (a hypervisor giving
// our CPUs to others), from /proc/stat's first line, and how many CPUs
// that sums (its cpuN lines: all of the host's, where runtime.NumCPU
// counts only those this process may run on). ok is false when it cannot
// be read.
func hostCPU() (secs float64, cpus int, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	text := string(b)
	line, rest, _ := strings.Cut(text, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, false
	}
	var busy float64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system, irq softirq steal
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return 0, 0, false
		}
		busy += v
	}
	for l := range strings.Lines(rest) {
		if len(l) > 3 && strings.HasPrefix(l, "cpu") && l[3] >= '0' && l[3] <= '9' {
			cpus++
		}
	}
	return busy / clockTicks, cpus, true
}
