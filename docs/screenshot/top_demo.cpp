// SPDX-License-Identifier: GPL-2.0-or-later
// A small service to show `heaptrace top` on (docs/screenshot/top.sh):
// it says "top_demo ready PID" and waits until a tracer is attached (so
// that the view sees every block; with "now" as argv[2], not at all),
// loads a dictionary of 2 MB, then, each 5 ms until SECONDS (argv[1],
// 600) have passed: a response cache grows by a few kilobytes (up to
// 24 MB, then it drops its oldest entries), a parser makes and frees its
// tokens, and an index keeps postings in C++ containers, whose
// allocations are named by long templated functions.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace demo {

struct Posting {
	unsigned long document;
	double weight;
};

template <typename Key, typename Value, typename Compare = std::less<Key>>
class InvertedIndex {
public:
	// Each term's postings grow one by one, as a real index's do.
	__attribute__((noinline)) void add(const Key &term, const Value &posting)
	{
		postings_[term].push_back(posting);
	}

private:
	std::map<Key, std::vector<Value>, Compare> postings_;
};

class ResponseCache {
public:
	__attribute__((noinline)) void store(unsigned long key, std::size_t size)
	{
		char *body = static_cast<char *>(std::malloc(size));
		std::memset(body, static_cast<int>(key), size);
		entries_.push_back({key, body});
		bytes_ += size;
		while (bytes_ > limit_) {
			bytes_ -= sizes_.front();
			std::free(entries_.front().body);
			entries_.pop_front();
			sizes_.pop_front();
		}
		sizes_.push_back(size);
	}

private:
	struct Entry {
		unsigned long key;
		char *body;
	};
	std::deque<Entry> entries_;
	std::deque<std::size_t> sizes_;
	std::size_t bytes_ = 0;
	const std::size_t limit_ = 24u << 20;
};

static bool traced()
{
	FILE *f = std::fopen("/proc/self/status", "r");
	char line[256];
	int pid = 0;
	while (f && std::fgets(line, sizeof(line), f))
		if (!std::strncmp(line, "TracerPid:", 10))
			pid = std::atoi(line + 10);
	if (f)
		std::fclose(f);
	return pid != 0;
}

__attribute__((noinline)) static char *load_dictionary(std::size_t size)
{
	char *words = static_cast<char *>(std::malloc(size));
	std::memset(words, 'a', size);
	return words;
}

__attribute__((noinline)) static std::size_t parse_request(const char *line)
{
	std::vector<std::string> tokens;
	for (const char *p = line; *p;) {
		const char *end = std::strchr(p, ' ');
		std::size_t n = end ? static_cast<std::size_t>(end - p) : std::strlen(p);
		tokens.emplace_back(p, n);
		p += n + (end ? 1 : 0);
	}
	std::size_t total = 0;
	for (const auto &t : tokens)
		total += t.size();
	return total;
}

} // namespace demo

int main(int argc, char **argv)
{
	using clock = std::chrono::steady_clock;
	const double seconds = argc > 1 ? std::atof(argv[1]) : 600;
	std::printf("top_demo ready %d\n", static_cast<int>(getpid()));
	std::fflush(stdout);
	const bool wait = !(argc > 2 && !std::strcmp(argv[2], "now"));
	while (wait && !demo::traced())
		std::this_thread::sleep_for(std::chrono::milliseconds(20));

	char *dictionary = demo::load_dictionary(2u << 20);
	demo::ResponseCache cache;
	demo::InvertedIndex<std::string, demo::Posting> index;
	const char *request =
		"GET /api/v2/search?q=heap+profiler&page=3 HTTP/1.1 host example.org "
		"accept application/json user-agent demo/1.0 connection keep-alive";
	const auto end = clock::now() + std::chrono::duration<double>(seconds);
	std::size_t checksum = 0;
	for (unsigned long i = 0; clock::now() < end; i++) {
		cache.store(i, 2048 + (i * 7919) % 6144);
		for (int k = 0; k < 20; k++)
			checksum += demo::parse_request(request);
		for (unsigned long k = 0; k < 40; k++)
			index.add("term" + std::to_string((i + k) % 256),
				  {i, 1.0 / (1 + k)});
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
	}
	std::printf("top_demo done %zu\n", checksum + (dictionary[0] == 'a'));
	std::free(dictionary);
	return 0;
}
