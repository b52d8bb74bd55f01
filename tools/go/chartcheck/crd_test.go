package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoadSeeds(t *testing.T) {
	dir := t.TempDir()
	text := "# a seed\napiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {name: a}\nspec:\n" +
		"  selector: {matchLabels: {app: a}}\n  template: {metadata: {labels: {app: a}}}\n---\nkind: Service\n" +
		"---\napiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nspec:\n  replicas: 2\n"
	file := filepath.Join(dir, "seed.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, err := LoadSeeds(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || !docs[0].Complete || docs[1].Complete {
		t.Fatalf("docs=%+v", docs)
	}
	if want := filepath.Base(dir) + "/seed.yaml#2"; docs[1].Where != want {
		t.Errorf("where = %s, want %s", docs[1].Where, want)
	}
	if err := os.WriteFile(file, []byte("kind: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSeeds(file); err == nil {
		t.Error("a seed file that is not YAML was accepted")
	}
}

func TestSeedsMissingDirectoryFails(t *testing.T) {
	crd := filepath.Join(t.TempDir(), "crd.yaml")
	if err := os.WriteFile(crd, []byte("kind: CustomResourceDefinition\nspec: {group: g, names: {kind: K}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmdSeeds([]string{"-crd", crd, "-min-complete", "0", filepath.Join(t.TempDir(), "absent")}); err == nil {
		t.Error("a missing seed directory passed")
	}
}
