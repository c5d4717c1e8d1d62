// Thin re-export of the owning package's barrel (see README: "Subpaths").
export * from "@suaveplan/sandbox-quickjs";
