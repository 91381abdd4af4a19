/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod sandbox's infra process for the runtime tests: waits for a
 * signal, reaps children, exits 0 on SIGINT or SIGTERM. Built static into
 * our own pause image.
 */
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig)
{
	(void)sig;
	_exit(0);
}

static void reap(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(void)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = reap;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	for (;;)
		pause();
}
