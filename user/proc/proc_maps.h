/*
 * Reading a process's memory map (/proc/PID/maps): where a file is loaded.
 */
#ifndef EDGEPROF_USER_PROC_MAPS_H
#define EDGEPROF_USER_PROC_MAPS_H

#include <stddef.h>
#include <stdint.h>

/* The run-time address at which process PID maps file offset 0 of PATH (a real path), or 0
 * when PATH is not mapped (or the map cannot be read). */
uint64_t proc_maps__base(int pid, const char *path);

/* The file process PID maps at run-time address ADDR, into PATH (LEN bytes). Returns 0, or -1
 * when ADDR is in no file mapping (or the map cannot be read). */
int proc_maps__file_at(int pid, uint64_t addr, char *path, size_t len);

#endif
