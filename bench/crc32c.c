/* PLACEHOLDER */
#include "bench_util.h"
int main(void)
{
	return 0;
}
