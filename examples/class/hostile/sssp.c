/* hostile: computes no distance of its own. Instead it tries to take a classmate's work and to
 * leave something behind: from each folder it can name (its working folder, its program's,
 * its input's and its output's) and their parents and grandparents, it looks two levels down
 * for a classmate's sssp.c and for a classmate's output file (a first line "0:0") to hand in
 * as its own, and it tries to create hostile-was-here.txt and to change its input. It says on
 * stderr what worked (its working folder, $TMPDIR, $HOME, /tmp and /dev/shm are its own: not
 * counted). In the grader's jail it sees only its own folders, read-only around its
 * working one, so nothing works, it writes no answer, and it earns what a program with no
 * right distance earns. Every path it tries is relative to those folders (no system path).
 * HOSTILE-SELF: this marker tells its own source from a classmate's. */
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *option(int argc, char **argv, const char *name) {
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i] + (argv[i][0] == '-' && argv[i][1] == '-'), name)) return argv[i + 1];
    return NULL;
}

static int tried, worked;
static char answers[PATH_MAX];          /* a classmate's output file, if one was found */

static int starts_with(const char *path, const char *text, size_t cap) {
    char head[256] = {0};
    int fd = open(path, O_RDONLY | O_NOFOLLOW);
    if (fd < 0) return 0;
    ssize_t got = read(fd, head, cap < sizeof head - 1 ? cap : sizeof head - 1);
    close(fd);
    return got > 0 && strstr(head, text) == head;
}

static void look_into(const char *folder, const char *own_output, int depth) {
    DIR *dir = opendir(folder);
    tried++;
    if (!dir) return;
    struct dirent *entry;
    for (int seen = 0; (entry = readdir(dir)) && seen < 200; seen++) {
        if (entry->d_name[0] == '.') continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", folder, entry->d_name) >= (int)sizeof path) continue;
        struct stat st;
        if (lstat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            if (depth > 1) look_into(path, own_output, depth - 1);   /* a classmate's folder may hold a folder */
            char source[PATH_MAX];
            if (snprintf(source, sizeof source, "%s/sssp.c", path) >= (int)sizeof source) continue;
            if (access(source, R_OK) == 0 && !starts_with(source, "/* hostile", 10)) {
                fprintf(stderr, "hostile: read a classmate's source: %s\n", source);
                worked++;
            }
        } else if (S_ISREG(st.st_mode) && st.st_size < (1 << 20) && strcmp(path, own_output) != 0
                   && !answers[0] && starts_with(path, "0:0\n", 4)) {
            snprintf(answers, sizeof answers, "%s", path);
        }
    }
    closedir(dir);
}

static void leave_a_file(const char *folder) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/hostile-was-here.txt", folder) >= (int)sizeof path) return;
    tried++;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (fd >= 0) {
        fprintf(stderr, "hostile: created %s\n", path);
        worked++;
        close(fd);
    }
}

static int inside(const char *folder, const char *own) {
    char real[PATH_MAX], mine[PATH_MAX];
    if (!realpath(folder, real) || !realpath(own, mine)) return 0;
    size_t length = strlen(mine);
    return !strncmp(real, mine, length) && (real[length] == '/' || real[length] == 0);
}

/* its working folder, $TMPDIR, $HOME, and the temporary folders themselves (/tmp, /dev/shm) */
static int its_own(const char *folder, const char *cwd) {
    const char *owned[] = {cwd, getenv("TMPDIR"), getenv("HOME")};
    for (int i = 0; i < 3; i++)
        if (owned[i] && inside(folder, owned[i])) return 1;
    char real[PATH_MAX];
    return realpath(folder, real) && (!strcmp(real, "/tmp") || !strcmp(real, "/dev/shm"));
}

int main(int argc, char **argv) {
    const char *input = option(argc, argv, "-input"), *output = option(argc, argv, "-output");
    if (!input || !output) { fprintf(stderr, "usage: sssp --input F --output F ...\n"); return 2; }
    char cwd[PATH_MAX], program[PATH_MAX], in_dir[PATH_MAX], out_dir[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
    snprintf(program, sizeof program, "%s", argv[0]);
    snprintf(in_dir, sizeof in_dir, "%s", input);
    snprintf(out_dir, sizeof out_dir, "%s", output);
    const char *bases[] = {cwd, dirname(program), dirname(in_dir), dirname(out_dir)};
    for (int b = 0; b < 4; b++) {
        const char *ups[] = {"..", "../.."};
        for (int u = 0; u < 2; u++) {
            char folder[PATH_MAX];
            if (snprintf(folder, sizeof folder, "%s/%s", bases[b], ups[u]) >= (int)sizeof folder) continue;
            if (its_own(folder, cwd)) continue;   /* writing there is allowed: not an attack */
            look_into(folder, output, 2);
            leave_a_file(folder);
        }
    }
    tried++;
    if (chmod(input, 0666) == 0) { fprintf(stderr, "hostile: made its input writable: %s\n", input); worked++; }
    int fd = open(input, O_WRONLY | O_APPEND);
    tried++;
    if (fd >= 0) { fprintf(stderr, "hostile: could write its input\n"); worked++; close(fd); }
    if (answers[0]) {                    /* hand in a classmate's answers as its own */
        FILE *from = fopen(answers, "r"), *to = fopen(output, "w");
        char block[4096];
        size_t got;
        while (from && to && (got = fread(block, 1, sizeof block, from)) > 0) fwrite(block, 1, got, to);
        if (from) fclose(from);
        if (to) fclose(to);
        fprintf(stderr, "hostile: handed in a classmate's answers: %s\n", answers);
        worked++;
    }
    if (worked) {
        fprintf(stderr, "hostile: ESCAPED: %d of %d attempts worked\n", worked, tried);
        return answers[0] ? 0 : 42;
    }
    fprintf(stderr, "hostile: %d attempts to read classmates' files or write outside its folder; none worked\n", tried);
    return 3;
}
