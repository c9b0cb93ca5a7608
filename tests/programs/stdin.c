/*
 * Oracle test program: reads stdin (the oracle script feeds it a fixed file) and counts
 * lines, words, digits and letter classes with a byte-level state machine.
 */
#include <ctype.h>
#include <stdio.h>

int main(void)
{
	long lines = 0, words = 0, digits = 0, upper = 0, bytes = 0;
	int c, in_word = 0, hist[8] = { 0 };

	while ((c = getchar()) != EOF) {
		bytes++;
		if (c == '\n')
			lines++;
		if (isspace(c)) {
			in_word = 0;
			continue;
		}
		if (!in_word) {
			words++;
			in_word = 1;
		}
		if (isdigit(c))
			digits++;
		else if (isupper(c))
			upper++;
		hist[c & 7]++;
	}
	printf("%ld %ld %ld %ld %ld", lines, words, bytes, digits, upper);
	for (c = 0; c < 8; c++)
		printf(" %d", hist[c]);
	printf("\n");
	return 0;
}
