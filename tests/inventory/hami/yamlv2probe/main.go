// yamlv2probe: what gopkg.in/yaml.v2 (HAMi's, the device plugin's and
// Volcano's YAML library) parses from device-config texts.
//
// stdin: a JSON list of {"mode": "any"|"list"|"wrapper", "text": "..."}.
// stdout: a JSON list of {"value": ...} or {"error": "..."}, in order.
//
// "any" decodes into interface{} and writes every scalar with its Go type
// ({"str": s}, {"int": "12"}, {"float": "1.5"}, {"bool": b}, null; maps as
// {"map": [[key, value], ...]}, lists as {"list": [...]}), so the caller can
// compare types, not only values. "list" and "wrapper" decode into structs
// shaped like HAMi's (pkg/device/ascend/vnpu.go) and write them as JSON.
// Built and cached by tests/inventory/hami/yamlv2.py; not part of the portal.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"gopkg.in/yaml.v2"
)

type template struct {
	Name   string `yaml:"name" json:"name"`
	Memory int64  `yaml:"memory" json:"memory"`
	AICore int32  `yaml:"aiCore,omitempty" json:"aiCore"`
	AICPU  int32  `yaml:"aiCPU,omitempty" json:"aiCPU"`
}

type vnpuConfig struct {
	CommonWord         string     `yaml:"commonWord" json:"commonWord"`
	ChipName           string     `yaml:"chipName" json:"chipName"`
	ResourceName       string     `yaml:"resourceName" json:"resourceName"`
	ResourceMemoryName string     `yaml:"resourceMemoryName" json:"resourceMemoryName"`
	ResourceCoreName   string     `yaml:"resourceCoreName" json:"resourceCoreName"`
	MemoryAllocatable  int64      `yaml:"memoryAllocatable" json:"memoryAllocatable"`
	MemoryCapacity     int64      `yaml:"memoryCapacity" json:"memoryCapacity"`
	AICore             int32      `yaml:"aiCore" json:"aiCore"`
	AICPU              int32      `yaml:"aiCPU" json:"aiCPU"`
	Templates          []template `yaml:"templates" json:"templates"`
}

type listConfig struct {
	VNPUs []vnpuConfig `yaml:"vnpus" json:"vnpus"`
}

type wrapperConfig struct {
	VNPUs struct {
		HamiVnpuCore bool         `yaml:"hamiVnpuCore" json:"hamiVnpuCore"`
		Configs      []vnpuConfig `yaml:"configs" json:"configs"`
	} `yaml:"vnpus" json:"vnpus"`
}

func typed(v interface{}) interface{} {
	switch x := v.(type) {
	case nil:
		return nil
	case bool:
		return map[string]interface{}{"bool": x}
	case int:
		return map[string]interface{}{"int": strconv.FormatInt(int64(x), 10)}
	case int64:
		return map[string]interface{}{"int": strconv.FormatInt(x, 10)}
	case uint64:
		return map[string]interface{}{"int": strconv.FormatUint(x, 10)}
	case float64:
		return map[string]interface{}{"float": strconv.FormatFloat(x, 'g', -1, 64)}
	case string:
		return map[string]interface{}{"str": x}
	case map[interface{}]interface{}:
		items := [][]interface{}{}
		for k, item := range x {
			items = append(items, []interface{}{typed(k), typed(item)})
		}
		return map[string]interface{}{"map": items}
	case []interface{}:
		items := []interface{}{}
		for _, item := range x {
			items = append(items, typed(item))
		}
		return map[string]interface{}{"list": items}
	default:
		return map[string]interface{}{"other": fmt.Sprintf("%T %v", v, v)}
	}
}

func parse(mode, text string) (interface{}, error) {
	switch mode {
	case "list":
		var out listConfig
		err := yaml.Unmarshal([]byte(text), &out)
		return out, err
	case "wrapper":
		var out wrapperConfig
		err := yaml.Unmarshal([]byte(text), &out)
		return out, err
	default:
		var out interface{}
		err := yaml.Unmarshal([]byte(text), &out)
		return typed(out), err
	}
}

func main() {
	var requests []struct {
		Mode string `json:"mode"`
		Text string `json:"text"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&requests); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	answers := []map[string]interface{}{}
	for _, request := range requests {
		value, err := parse(request.Mode, request.Text)
		if err != nil {
			answers = append(answers, map[string]interface{}{"error": err.Error()})
		} else {
			answers = append(answers, map[string]interface{}{"value": value})
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
