namespace ddl::runtime {
int placeholder() {
    return 0;
}
} // namespace ddl::runtime
