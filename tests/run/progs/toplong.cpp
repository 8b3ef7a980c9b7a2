// SPDX-License-Identifier: GPL-2.0-or-later
// A process whose biggest site has a long C++ name, for `heaptrace top`'s
// screen at 80 columns (top_screen.sh): a member of a class template in
// three namespaces, instantiated on standard containers. It says "ready
// PID", waits for a tracer (TracerPid in /proc/self/status), then holds
// 2,000,000 bytes from that function for SECONDS (argv[1]) and exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#include "tracer_pid.h"
#define NOINLINE __attribute__((noinline))

namespace heaptrace_tests {
namespace a_rather_long_namespace_name {
namespace implementation_details {

template <typename Key, typename Value, typename Extra>
struct table_holder {
	NOINLINE static char *make_the_table_with_a_long_name(std::size_t n)
	{
		char *p = static_cast<char *>(std::malloc(n));
		std::memset(p, 7, n);
		return p;
	}
};

} // namespace implementation_details
} // namespace a_rather_long_namespace_name
} // namespace heaptrace_tests

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? std::atof(argv[1]) : 10;
	std::printf("ready %d\n", (int)getpid());
	std::fflush(stdout);
	while (!self_tracer_pid())
		usleep(20000);
	using namespace heaptrace_tests::a_rather_long_namespace_name;
	char *p = implementation_details::table_holder<
		std::map<std::string, std::vector<int>>,
		std::vector<std::pair<std::string, long>>,
		std::map<int, std::string>>::make_the_table_with_a_long_name(
			2000000);
	usleep((useconds_t)(seconds * 1e6));
	std::free(p);
	return 0;
}
