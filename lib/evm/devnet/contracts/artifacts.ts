// GENERATED FILE, DO NOT EDIT. Regenerate with `npm run contracts` (scripts/compile-contracts.ts)
// from BlockgateToken.sol, Emitter.sol in this directory.
// solc 0.8.37+commit.f401782d.Emscripten.clang, evmVersion cancun, optimizer 200 runs, bytecodeHash none.

export const BlockgateToken = {
  abi: [
    {
      "inputs": [],
      "stateMutability": "nonpayable",
      "type": "constructor"
    },
    {
      "inputs": [
        {
          "internalType": "address",
          "name": "spender",
          "type": "address"
        },
        {
          "internalType": "uint256",
          "name": "allowance",
          "type": "uint256"
        },
        {
          "internalType": "uint256",
          "name": "needed",
          "type": "uint256"
        }
      ],
      "name": "ERC20InsufficientAllowance",
      "type": "error"
    },
    {
      "inputs": [
        {
          "internalType": "address",
          "name": "sender",
          "type": "address"
        },
        {
          "internalType": "uint256",
          "name": "balance",
          "type": "uint256"
        },
        {
          "internalType": "uint256",
          "name": "needed",
          "type": "uint256"
        }
      ],
      "name": "ERC20InsufficientBalance",
      "type": "error"
    },
    {
      "inputs": [
        {
          "internalType": "address",
          "name": "receiver",
          "type": "address"
        }
      ],
      "name": "ERC20InvalidReceiver",
      "type": "error"
    },
    {
      "inputs": [
        {
          "internalType": "address",
          "name": "spender",
          "type": "address"
        }
      ],
      "name": "ERC20InvalidSpender",
      "type": "error"
    },
    {
      "anonymous": false,
      "inputs": [
        {
          "indexed": true,
          "internalType": "address",
          "name": "owner",
          "type": "address"
        },
        {
          "indexed": true,
          "internalType": "address",
          "name": "spender",
          "type": "address"
        },
        {
          "indexed": false,
          "internalType": "uint256",
          "name": "value",
          "type": "uint256"
        }
      ],
      "name": "Approval",
      "type": "event"
    },
    {
      "anonymous": false,
      "inputs": [
        {
          "indexed": true,
          "internalType": "address",
          "name": "from",
          "type": "address"
        },
        {
          "indexed": true,
          "internalType": "address",
          "name": "to",
          "type": "address"
        },
        {
          "indexed": false,
          "internalType": "uint256",
          "name": "value",
          "type": "uint256"
        }
      ],
      "name": "Transfer",
      "type": "event"
    },
    {
      "inputs": [
        {
          "internalType": "address",
          "name": "",
          "type": "address"
        },
        {
          "internalType": "address",
          "name": "",
          "type": "address"
        }
      ],
      "name": "allowance",
      "outputs": [
        {
          "internalType": "uint256",
          "name": "",
          "type": "uint256"
        }
      ],
      "stateMutability": "view",
      "type": "function"
    },
    {
      "inputs": [
        {
          "internalType": "address",
          "name": "spender",
          "type": "address"
        },
        {
          "internalType": "uint256",
          "name": "value",
          "type": "uint256"
        }
      ],
      "name": "approve",
      "outputs": [
        {
          "internalType": "bool",
          "name": "",
          "type": "bool"
        }
      ],
      "stateMutability": "nonpayable",
      "type": "function"
    },
    {
      "inputs": [
        {
          "internalType": "address",
          "name": "",
          "type": "address"
        }
      ],
      "name": "balanceOf",
      "outputs": [
        {
          "internalType": "uint256",
          "name": "",
          "type": "uint256"
        }
      ],
      "stateMutability": "view",
      "type": "function"
    },
    {
      "inputs": [],
      "name": "decimals",
      "outputs": [
        {
          "internalType": "uint8",
          "name": "",
          "type": "uint8"
        }
      ],
      "stateMutability": "view",
      "type": "function"
    },
    {
      "inputs": [],
      "name": "name",
      "outputs": [
        {
          "internalType": "string",
          "name": "",
          "type": "string"
        }
      ],
      "stateMutability": "view",
      "type": "function"
    },
    {
      "inputs": [],
      "name": "symbol",
      "outputs": [
        {
          "internalType": "string",
          "name": "",
          "type": "string"
        }
      ],
      "stateMutability": "view",
      "type": "function"
    },
    {
      "inputs": [],
      "name": "totalSupply",
      "outputs": [
        {
          "internalType": "uint256",
          "name": "",
          "type": "uint256"
        }
      ],
      "stateMutability": "view",
      "type": "function"
    },
    {
      "inputs": [
        {
          "internalType": "address",
          "name": "to",
          "type": "address"
        },
        {
          "internalType": "uint256",
          "name": "value",
          "type": "uint256"
        }
      ],
      "name": "transfer",
      "outputs": [
        {
          "internalType": "bool",
          "name": "",
          "type": "bool"
        }
      ],
      "stateMutability": "nonpayable",
      "type": "function"
    },
    {
      "inputs": [
        {
          "internalType": "address",
          "name": "from",
          "type": "address"
        },
        {
          "internalType": "address",
          "name": "to",
          "type": "address"
        },
        {
          "internalType": "uint256",
          "name": "value",
          "type": "uint256"
        }
      ],
      "name": "transferFrom",
      "outputs": [
        {
          "internalType": "bool",
          "name": "",
          "type": "bool"
        }
      ],
      "stateMutability": "nonpayable",
      "type": "function"
    }
  ] as const,
  bytecode: "0x608060405234801561000f575f5ffd5b505f61001d6012600a61017b565b61002b90633b9aca0061018d565b5f818155338082526001602052604080832084905551929350917fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef906100749085815260200190565b60405180910390a3506101a4565b634e487b7160e01b5f52601160045260245ffd5b6001815b60018411156100d1578085048111156100b5576100b5610082565b60018416156100c357908102905b60019390931c92800261009a565b935093915050565b5f826100e757506001610175565b816100f357505f610175565b816001811461010957600281146101135761012f565b6001915050610175565b60ff84111561012457610124610082565b50506001821b610175565b5060208310610133831016604e8410600b8410161715610152575081810a610175565b61015e5f198484610096565b805f190482111561017157610171610082565b0290505b92915050565b5f61018683836100d9565b9392505050565b808202811582820484141761017557610175610082565b6104fc806101b15f395ff3fe608060405234801561000f575f5ffd5b5060043610610090575f3560e01c8063313ce56711610063578063313ce5671461012b57806370a082311461014557806395d89b4114610164578063a9059cbb14610186578063dd62ed3e14610199575f5ffd5b806306fdde0314610094578063095ea7b3146100df57806318160ddd1461010257806323b872dd14610118575b5f5ffd5b6100c960405180604001604052806016815260200175213637b1b5b3b0ba32902232bb3732ba102a37b5b2b760511b81525081565b6040516100d691906103ec565b60405180910390f35b6100f26100ed36600461043c565b6101c3565b60405190151581526020016100d6565b61010a5f5481565b6040519081526020016100d6565b6100f2610126366004610464565b610255565b610133601281565b60405160ff90911681526020016100d6565b61010a61015336600461049e565b60016020525f908152604090205481565b6100c9604051806040016040528060038152602001621091d560ea1b81525081565b6100f261019436600461043c565b6102ef565b61010a6101a73660046104be565b600260209081525f928352604080842090915290825290205481565b5f6001600160a01b0383166101f257604051634a1406b160e11b81525f60048201526024015b60405180910390fd5b335f8181526002602090815260408083206001600160a01b03881680855290835292819020869055518581529192917f8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925910160405180910390a350600192915050565b6001600160a01b0383165f9081526002602090815260408083203384529091528120545f1981146102d957828110156102b157604051637dc7a0d960e11b815233600482015260248101829052604481018490526064016101e9565b6001600160a01b0385165f908152600260209081526040808320338452909152902083820390555b6102e4858585610304565b506001949350505050565b5f6102fb338484610304565b50600192915050565b6001600160a01b03821661032d5760405163ec442f0560e01b81525f60048201526024016101e9565b6001600160a01b0383165f908152600160205260409020548181101561037f5760405163391434e360e21b81526001600160a01b038516600482015260248101829052604481018390526064016101e9565b6001600160a01b038085165f8181526001602052604080822086860390559286168082529083902080548601905591517fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef906103de9086815260200190565b60405180910390a350505050565b602081525f82518060208401528060208501604085015e5f604082850101526040601f19601f83011684010191505092915050565b80356001600160a01b0381168114610437575f5ffd5b919050565b5f5f6040838503121561044d575f5ffd5b61045683610421565b946020939093013593505050565b5f5f5f60608486031215610476575f5ffd5b61047f84610421565b925061048d60208501610421565b929592945050506040919091013590565b5f602082840312156104ae575f5ffd5b6104b782610421565b9392505050565b5f5f604083850312156104cf575f5ffd5b6104d883610421565b91506104e660208401610421565b9050925092905056fea164736f6c6343000825000a" as `0x${string}`,
};

export const Emitter = {
  abi: [
    {
      "anonymous": false,
      "inputs": [
        {
          "indexed": true,
          "internalType": "address",
          "name": "sender",
          "type": "address"
        },
        {
          "indexed": true,
          "internalType": "uint256",
          "name": "round",
          "type": "uint256"
        },
        {
          "indexed": false,
          "internalType": "string",
          "name": "note",
          "type": "string"
        },
        {
          "indexed": false,
          "internalType": "uint256",
          "name": "value",
          "type": "uint256"
        }
      ],
      "name": "Ping",
      "type": "event"
    },
    {
      "inputs": [
        {
          "internalType": "uint256",
          "name": "round",
          "type": "uint256"
        },
        {
          "internalType": "string",
          "name": "note",
          "type": "string"
        }
      ],
      "name": "ping",
      "outputs": [],
      "stateMutability": "payable",
      "type": "function"
    }
  ] as const,
  bytecode: "0x6080604052348015600e575f5ffd5b5061013c8061001c5f395ff3fe60806040526004361061001d575f3560e01c8063cba2a31614610021575b5f5ffd5b61003461002f366004610081565b610036565b005b82336001600160a01b03167f61b609556998039b3e222adc7e832af04c828c9521055254f06341a7abbd2903848434604051610074939291906100f8565b60405180910390a3505050565b5f5f5f60408486031215610093575f5ffd5b83359250602084013567ffffffffffffffff8111156100b0575f5ffd5b8401601f810186136100c0575f5ffd5b803567ffffffffffffffff8111156100d6575f5ffd5b8660208284010111156100e7575f5ffd5b939660209190910195509293505050565b60408152826040820152828460608301375f606084830101525f6060601f19601f860116830101905082602083015294935050505056fea164736f6c6343000825000a" as `0x${string}`,
};
