/*
 * Reading a process's memory map (/proc/PID/maps): where a file is loaded.
 */
#ifndef EDGEPROF_USER_PROC_MAPS_H
#define EDGEPROF_USER_PROC_MAPS_H

#include <stdint.h>

/* The run-time address at which process PID maps file offset 0 of PATH (a real path), or 0
 * when PATH is not mapped (or the map cannot be read). */
uint64_t proc_maps__base(int pid, const char *path);

#endif
