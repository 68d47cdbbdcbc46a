#include <iostream>
int main() { std::cout << "tessel\n"; return 0; }
