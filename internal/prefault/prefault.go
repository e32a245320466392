// Package prefault maps the running binary's code into the process with one
// system call as the process starts, rather than one page fault per 64 KiB
// the first time each piece of code runs.
//
// On a virtual machine a page fault can exit to the hypervisor: on the 2-core
// VMs Weir is measured on (docs/benchmarks.md) it costs ~10 µs, and a weir
// command takes 300–400 of them in its code alone, as much as 4 ms of a
// 20 ms start. MADV_POPULATE_READ (Linux 5.14) maps the code's pages, which
// the page cache holds once any weir process has run, in ~1 ms (on a cold
// cache it reads the whole code from disk at once). The process's resident
// size grows by the code it would not have run (file pages, shared and
// reclaimable, not memory of its own); an older kernel refuses the advice
// and nothing changes.
//
// The package imports nothing but syscall: Go initialises packages in the
// order of their import paths as their imports are ready, so its init runs
// as soon as syscall's has (15th of ~190 in weir), before most packages'
// inits run their code.
package prefault
