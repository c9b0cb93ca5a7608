/*
 * The example program bundled with edgeprof (`make example`): counts word frequencies in its
 * input (the file named by its argument, standard input, or a built-in text when standard
 * input is a terminal) and prints them sorted.
 * Small and readable, with the shapes a CFG should show: loops, a switch that gcc -O2 turns
 * into a jump table, recursion (a binary search tree) and a no-return error path.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct word {
	char *text;
	unsigned count;
	struct word *left, *right;
};

static const char builtin_text[] =
	"the quick brown fox jumps over the lazy dog; the dog sleeps, the fox runs!\n"
	"Don't count digits like 42 or punctuation: only words, the words, THE WORDS.\n";

static __attribute__((noinline, noreturn)) void die(const char *what)
{
	perror(what);
	exit(1);
}

static __attribute__((noinline)) char *dup_word(const char *s, size_t len)
{
	char *w = malloc(len + 1);

	if (!w)
		die("malloc");
	memcpy(w, s, len);
	w[len] = '\0';
	return w;
}

/* Inserts the word S[0..LEN) into the tree at *ROOT, or counts it again (recursive). */
static __attribute__((noinline)) void insert(struct word **root, const char *s, size_t len)
{
	struct word *n = *root;
	int cmp;

	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n)
			die("calloc");
		n->text = dup_word(s, len);
		n->count = 1;
		*root = n;
		return;
	}
	cmp = strncmp(s, n->text, len);
	if (cmp == 0 && n->text[len] == '\0')
		n->count++;
	else if (cmp < 0 || (cmp == 0 && n->text[len] != '\0'))
		insert(&n->left, s, len);
	else
		insert(&n->right, s, len);
}

enum char_class { C_LETTER, C_APOSTROPHE, C_DIGIT, C_SPACE, C_OTHER };

/* Classifies one byte; the switch over character ranges becomes a jump table at -O2. */
static __attribute__((noinline)) enum char_class classify(int c)
{
	switch (c) {
	case 'a' ... 'z':
		return C_LETTER;
	case 'A' ... 'Z':
		return C_LETTER;
	case '\'':
		return C_APOSTROPHE;
	case '0' ... '9':
		return C_DIGIT;
	case ' ':
	case '\t':
	case '\n':
	case '\r':
		return C_SPACE;
	default:
		return C_OTHER;
	}
}

/* Splits TEXT into lowercase words and inserts each; returns the number of words. */
static __attribute__((noinline)) unsigned count_words(struct word **root, char *text, size_t n)
{
	unsigned words = 0;
	size_t start = 0, i;
	int in_word = 0;

	for (i = 0; i <= n; i++) {
		enum char_class cl = i < n ? classify((unsigned char)text[i]) : C_OTHER;

		if (cl == C_LETTER || (in_word && cl == C_APOSTROPHE)) {
			text[i] = (char)tolower((unsigned char)text[i]);
			if (!in_word)
				start = i;
			in_word = 1;
		} else if (in_word) {
			insert(root, text + start, i - start);
			words++;
			in_word = 0;
		}
	}
	return words;
}

/* Prints the tree in order (recursive) and frees it. */
static __attribute__((noinline)) void print_and_free(struct word *n)
{
	if (!n)
		return;
	print_and_free(n->left);
	printf("%6u %s\n", n->count, n->text);
	print_and_free(n->right);
	free(n->text);
	free(n);
}

static char *read_all(FILE *in, size_t *len)
{
	size_t cap = 4096, n = 0, got;
	char *buf = malloc(cap);

	if (!buf)
		die("malloc");
	while ((got = fread(buf + n, 1, cap - n, in)) > 0) {
		n += got;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				die("realloc");
		}
	}
	*len = n;
	return buf;
}

int main(int argc, char **argv)
{
	struct word *root = NULL;
	unsigned words;
	size_t len;
	char *text;

	if (argc > 1) {
		FILE *in = fopen(argv[1], "r");

		if (!in)
			die(argv[1]);
		text = read_all(in, &len);
		fclose(in);
	} else if (isatty(STDIN_FILENO)) {
		len = sizeof(builtin_text) - 1;
		text = dup_word(builtin_text, len);
	} else {
		text = read_all(stdin, &len);
	}
	words = count_words(&root, text, len);
	print_and_free(root);
	printf("%u words\n", words);
	free(text);
	return 0;
}
