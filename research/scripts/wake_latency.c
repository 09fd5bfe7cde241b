// Two threads split 1 ms of work, 400 times: how long a split takes when another thread keeps
// a CPU busy. research/scale-log.md, "2026-12-07 (eleventh session)".
//
//   cc -O2 -pthread -o wake_latency research/scripts/wake_latency.c
//   ./wake_latency futex|yield [WORKER_CPU [MAIN_CPU]]
//
// futex: the worker sleeps on a condition variable between splits (a futex wake);
// yield: it spins on sched_yield, as rayon's idle workers do before they sleep.
// Run it alone, then beside a busy loop (`nice -n 10`, or `chrt -i 0`, pinned or not).
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start = PTHREAD_COND_INITIALIZER, finish = PTHREAD_COND_INITIALIZER;
static atomic_int go, done;
static int yielding, worker_cpu = -1, main_cpu = -1;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

// About 0.5 ms of multiplications on this machine.
static unsigned long work(void) {
    unsigned long y = 1;
    for (long i = 0; i < 500000; i++) y = y * 6364136223846793005UL + 1442695040888963407UL;
    return y;
}

static void pin(int cpu) {
    if (cpu < 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *worker(void *arg) {
    (void)arg;
    pin(worker_cpu);
    for (;;) {
        if (yielding) {
            while (!atomic_load(&go)) sched_yield();
            atomic_store(&go, 0);
        } else {
            pthread_mutex_lock(&lock);
            while (!atomic_load(&go)) pthread_cond_wait(&start, &lock);
            atomic_store(&go, 0);
            pthread_mutex_unlock(&lock);
        }
        volatile unsigned long r = work();
        (void)r;
        pthread_mutex_lock(&lock);
        atomic_store(&done, 1);
        pthread_cond_signal(&finish);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2 || (strcmp(argv[1], "futex") && strcmp(argv[1], "yield"))) {
        fprintf(stderr, "usage: wake_latency futex|yield [WORKER_CPU [MAIN_CPU]]\n");
        return 2;
    }
    yielding = !strcmp(argv[1], "yield");
    if (argc > 2) worker_cpu = atoi(argv[2]);
    if (argc > 3) main_cpu = atoi(argv[3]);
    pin(main_cpu);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    const int splits = 400;
    double total = 0, best = 1e9;
    for (int i = 0; i < splits; i++) {
        double began = now();
        pthread_mutex_lock(&lock);
        atomic_store(&go, 1);
        pthread_cond_signal(&start);
        pthread_mutex_unlock(&lock);
        volatile unsigned long r = work();
        (void)r;
        pthread_mutex_lock(&lock);
        while (!atomic_load(&done)) pthread_cond_wait(&finish, &lock);
        atomic_store(&done, 0);
        pthread_mutex_unlock(&lock);
        double took = now() - began;
        total += took;
        if (took < best) best = took;
        if (!yielding) usleep(2000);
    }
    printf("%s: mean %.3f ms, best %.3f ms a split\n", argv[1], total / splits * 1e3, best * 1e3);
    return 0;
}
