// A main() for the fuzz targets where libFuzzer is not available (GCC builds): runs the target once
// on each file named, or on each file of each directory named, so the seed corpora and any crash
// reproducers still run as regression inputs under that compiler's sanitizers.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace
{

void run_file(const std::filesystem::path& p)
{
    std::ifstream f(p, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

} // namespace

int main(int argc, char** argv)
{
    std::size_t runs = 0;
    for (int i = 1; i < argc; ++i)
    {
        const std::filesystem::path p(argv[i]);
        if (std::filesystem::is_directory(p))
        {
            std::vector<std::filesystem::path> files;
            for (const auto& e : std::filesystem::directory_iterator(p))
            {
                if (e.is_regular_file())
                {
                    files.push_back(e.path());
                }
            }
            std::sort(files.begin(), files.end()); // the same order on every machine
            for (const auto& f : files)
            {
                run_file(f);
                ++runs;
            }
        }
        else
        {
            run_file(p);
            ++runs;
        }
    }
    std::printf("replayed %zu inputs\n", runs);
    return runs == 0 ? 1 : 0;
}
