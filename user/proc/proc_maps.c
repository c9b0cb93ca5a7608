/*
 * /proc/PID/maps lookups (see proc_maps.h).
 */
#include "user/proc/proc_maps.h"

#include <stdio.h>
#include <string.h>

uint64_t proc_maps__base(int pid, const char *path)
{
	char maps[64], line[4096];
	uint64_t base = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, off;
		char name[4096];

		if (sscanf(line, "%llx-%*[0-9a-f] %*s %llx %*s %*s %4095s", &lo, &off, name) == 3 &&
		    off == 0 && strcmp(name, path) == 0) {
			base = lo;
			break;
		}
	}
	if (f)
		fclose(f);
	return base;
}

int proc_maps__file_at(int pid, uint64_t addr, char *path, size_t len)
{
	char maps[64], line[4096];
	int ret = -1;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		char name[4096];

		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %4095s", &lo, &hi, name) == 3 &&
		    addr >= lo && addr < hi && name[0] == '/' && strlen(name) < len) {
			strcpy(path, name);
			ret = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	return ret;
}
