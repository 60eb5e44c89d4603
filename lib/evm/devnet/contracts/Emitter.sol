// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title Blockgate devnet event emitter
/// @notice Emits Ping events that mix indexed parameters (in topics) and non-indexed ones (in data),
///         for exercising eth_getLogs, receipts and log decoding on Blockgate EVM devnets.
///         Ether sent with ping() stays in this contract.
contract Emitter {
    event Ping(address indexed sender, uint256 indexed round, string note, uint256 value);

    function ping(uint256 round, string calldata note) external payable {
        emit Ping(msg.sender, round, note, msg.value);
    }
}
